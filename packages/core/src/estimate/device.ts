import { computeCapabilityNumber } from '../device/capabilities.js'
import type { EstimateDevice, GpuCatalogEntry, Precision } from '../schemas/index.js'
import { CUDA_CONTEXT_BYTES } from './constants.js'

/**
 * Dense matrix-multiply peak (TFLOPS) a device offers a precision: the FP16/BF16 tensor rate for 16-bit and mixed
 * precision (the fp32 vector rate where the device has no matrix units, or no BF16 support for bf16), and for fp32
 * the vector rate, or the TF32 tensor rate (half the FP16 rate on NVIDIA's datacenter and consumer parts) when
 * `tf32` is allowed and supported.
 */
export function devicePeakTflops(device: EstimateDevice, precision: Precision, tf32 = false): number {
  const tensor = device.fp16TensorTflops
  if (precision === 'fp32') {
    return tf32 && device.tf32 && tensor !== null
      ? Math.max(tensor / 2, device.fp32Tflops)
      : device.fp32Tflops
  }
  if (tensor === null) return device.fp32Tflops
  if (precision.startsWith('bf16') && !device.bf16) return device.fp32Tflops
  return tensor
}

/** Bytes of the CUDA/HIP context and loaded kernels, outside the caching allocator; none for CPU and MPS. */
export function cudaContextBytes(device: Pick<EstimateDevice, 'kind' | 'computeCapability'>): number {
  if (device.kind === 'rocm') return CUDA_CONTEXT_BYTES.rocm
  if (device.kind !== 'cuda') return 0
  const major = computeCapabilityNumber(device.computeCapability)
  if (!Number.isFinite(major)) return CUDA_CONTEXT_BYTES.ampereAda
  if (major >= 9) return CUDA_CONTEXT_BYTES.hopperAndLater
  if (major >= 8) return CUDA_CONTEXT_BYTES.ampereAda
  return CUDA_CONTEXT_BYTES.preAmpere
}

const GIB = 2 ** 30

/**
 * The estimate's device from a GPU catalog entry; `vramBytes` overrides the catalog size (what nvidia-smi reports,
 * or a what-if `--vram`). A board with several devices (MI250X) splits its memory, bandwidth and peak among them.
 */
export function deviceFromCatalogEntry(entry: GpuCatalogEntry, vramBytes?: number): EstimateDevice {
  const share = 1 / (entry.devicesPerBoard ?? 1)
  const kind: EstimateDevice['kind'] =
    entry.vendor === 'nvidia'
      ? 'cuda'
      : entry.vendor === 'amd'
        ? 'rocm'
        : entry.vendor === 'apple'
          ? 'mps'
          : entry.vendor === 'intel'
            ? 'xpu'
            : 'cpu'
  return {
    name: entry.name,
    kind,
    vramBytes: Math.round(vramBytes ?? entry.vramGB * share * GIB),
    fp16TensorTflops: entry.fp16TensorTflops === null ? null : entry.fp16TensorTflops * share,
    fp32Tflops: entry.fp32Tflops * share,
    memoryBandwidthGBs: entry.memoryBandwidthGBs * share,
    bf16: entry.bf16 === 'yes',
    tf32: entry.tf32 === 'yes',
    computeCapability: kind === 'cuda' ? entry.computeCapability : null,
  }
}
