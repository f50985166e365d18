/**
 * Messages trainers print when a GPU runs out of memory: PyTorch (CUDA and ROCm builds), the HIP runtime,
 * Apple MPS and XLA. Matched case-sensitively as printed, anywhere in a line.
 */
export const GPU_OOM_PATTERNS: readonly RegExp[] = [
  /CUDA out of memory/,
  /torch\.OutOfMemoryError/,
  /torch\.cuda\.OutOfMemoryError/,
  /CUDA error: out of memory/,
  /HIP out of memory/,
  /hipErrorOutOfMemory/,
  /MPS backend out of memory/,
  /RESOURCE_EXHAUSTED: Out of memory/,
]

/**
 * Messages that mean a device failed rather than the program: a GPU lost or fallen off the bus, ECC failure,
 * no device left. Program bugs (illegal memory access, device-side assert) are deliberately not listed.
 */
export const DEVICE_ERROR_PATTERNS: readonly RegExp[] = [
  /GPU is lost/i,
  /fallen off the bus|fell off the bus/i,
  /uncorrectable ECC error/i,
  /CUDA error: unknown error/,
  /No CUDA GPUs are available/,
  /no CUDA-capable device is detected/,
  /CUDA-capable device\(s\) is\/are busy or unavailable/,
  /hipErrorNoDevice|no ROCm-capable device is detected/,
  /Unable to determine the device handle for GPU/,
]

export function matchGpuOom(line: string): string | null {
  for (const pattern of GPU_OOM_PATTERNS) {
    const match = pattern.exec(line)
    if (match) return match[0]
  }
  return null
}

export interface DeviceErrorMatch {
  message: string
  /** The device the message names (as the trainer numbers it: cuda:1, GPU 1, device 1), when it names one. */
  deviceIndex: number | null
}

export function matchDeviceError(line: string): DeviceErrorMatch | null {
  for (const pattern of DEVICE_ERROR_PATTERNS) {
    if (pattern.test(line)) {
      // "GPU 1" or "cuda:1", not the PCI address in "GPU 0000:41:00.0"
      const named = /(?:cuda:|hip:|GPU ?|device[ =:]?)(\d+)\b(?!:)/i.exec(line)
      return { message: line.trim().slice(0, 300), deviceIndex: named ? Number(named[1]) : null }
    }
  }
  return null
}
