export {
  type ComputeCapability,
  computeCapabilityNumber,
  cpuHasBf16,
  type DeviceIdentity,
  hasFlashAttention,
  hasFp8,
  hasNativeBf16,
  hasTf32,
  isAmpereOrNewer,
  isCdna3,
  mixedPrecisionFor,
  parseComputeCapability,
} from './capabilities.js'
export { amdPrecision, appleGpuFamily, applePrecision, nvidiaPrecision } from './number-formats.js'
