import { describe, expect, it } from 'vitest'
import { matchDeviceError, matchGpuOom } from '../../src/detect/failure-patterns.js'

describe('failure patterns', () => {
  it('recognises GPU out-of-memory messages of PyTorch, HIP, MPS and XLA', () => {
    for (const line of [
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.',
      'torch.cuda.OutOfMemoryError: CUDA out of memory.',
      'RuntimeError: CUDA error: out of memory',
      'torch.OutOfMemoryError: HIP out of memory. Tried to allocate 1.50 GiB.',
      'RuntimeError: HIP error: hipErrorOutOfMemory',
      'RuntimeError: MPS backend out of memory (MPS allocated: 17.2 GB)',
      'jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate',
    ]) {
      expect(matchGpuOom(line), line).not.toBeNull()
    }
    expect(matchGpuOom('MemoryError: host ran out')).toBeNull()
    expect(matchGpuOom('loss went down, memory is fine')).toBeNull()
  })

  it('recognises device failures and the device they name, not program bugs', () => {
    expect(
      matchDeviceError('RuntimeError: CUDA error: uncorrectable ECC error encountered on cuda:1'),
    ).toMatchObject({ deviceIndex: 1 })
    expect(matchDeviceError('NVRM: GPU 0000:41:00.0: GPU has fallen off the bus.')).toMatchObject({
      deviceIndex: null,
    })
    expect(matchDeviceError('RuntimeError: No CUDA GPUs are available')).not.toBeNull()
    expect(matchDeviceError('RuntimeError: CUDA error: an illegal memory access was encountered')).toBeNull()
    expect(matchDeviceError('RuntimeError: CUDA error: device-side assert triggered')).toBeNull()
  })
})
