import { computeCapabilityNumber } from '../device/capabilities.js'
import type { EstimateDevice, EstimateInput } from '../schemas/index.js'
import { NCCL_CHANNELS, NCCL_CONNECTION_BYTES, NCCL_CONNECTIONS_PER_CHANNEL } from './constants.js'

/** Channels NCCL opens between the ranks of a node over the link, by NVLink generation (NCCL_CHANNELS). */
function ncclChannels(
  device: Pick<EstimateDevice, 'computeCapability'>,
  interconnect: EstimateInput['interconnect'],
) {
  if (interconnect === 'xgmi') return NCCL_CHANNELS.xgmi
  if (interconnect !== 'nvlink') return NCCL_CHANNELS.pcie
  const major = computeCapabilityNumber(device.computeCapability)
  if (!Number.isFinite(major) || major >= 9) return NCCL_CHANNELS.hopperAndLater
  return major >= 8 ? NCCL_CHANNELS.ampere : NCCL_CHANNELS.volta
}

/**
 * Bytes NCCL (RCCL on ROCm) holds on each device of a job of several ranks, outside PyTorch's caching allocator:
 * the protocol buffers of every connection of every channel. nvidia-smi counts them; max_memory_reserved does not.
 * A link that is not known is counted as NVLink of the device's generation, the larger figure, so a fit is never
 * claimed on the smaller one. Gloo (the CPU) and Apple's single device hold none.
 */
export function communicationBytes(
  input: Pick<EstimateInput, 'gpus' | 'nodes' | 'interconnect'>,
  device: Pick<EstimateDevice, 'kind' | 'computeCapability'> | null,
): number {
  if (input.gpus * input.nodes <= 1) return 0
  if (device !== null && device.kind !== 'cuda' && device.kind !== 'rocm') return 0
  const known = input.interconnect !== null && input.interconnect !== 'unknown'
  const link = known ? input.interconnect : device?.kind === 'rocm' ? 'xgmi' : 'nvlink'
  const channels = ncclChannels(device ?? { computeCapability: null }, link)
  return channels * NCCL_CONNECTIONS_PER_CHANNEL * NCCL_CONNECTION_BYTES
}
