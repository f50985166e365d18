import type { EstimateInput, EstimateResult } from '../schemas/index.js'
import { attentionExtraFlops } from './attention-work.js'
import {
  BANDWIDTH_EFFICIENCY,
  ELEMENTWISE_TRAFFIC_PER_ACTIVATION_BYTE,
  HOST_OPTIMIZER_GBS,
  PCIE_EFFECTIVE_GBS,
  UNFUSED_OPTIMIZER_TRAFFIC_FACTOR,
} from './constants.js'
import { devicePeakTflops } from './device.js'
import { sustainedPeakShare } from './device-efficiency.js'
import { eagerElementwiseBytes } from './elementwise.js'
import type { EstimateTuning, HeldMemory } from './estimate.js'
import { adapterFlopsPerToken, attentionFlopsPerToken, flopsPerToken } from './flops.js'
import { expertFlopsPerToken, expertsInFp32 } from './fp32-experts.js'
import { hostDispatchSeconds } from './host-dispatch.js'
import { OPTIMIZER_STEP_TRAFFIC } from './optimizer.js'
import { scalingEfficiency } from './scaling.js'
import { unalignedHeadExtraFlops } from './unaligned-gemm.js'

/** Step time, tokens per second and MFU on the device; null without a device. */
export function stepThroughput(input: EstimateInput, tuning: EstimateTuning, held: HeldMemory) {
  const { bytes, shards, acts } = held
  const spec = input.model
  const lora = input.lora
  const device = input.device
  const { precision, fp32Adapters, stateBytes, gradBytes } = bytes
  const { ranks, shardRanks, offloadOptimizer, offloadAll, trainableShard, weightsTotal } = shards
  const { tokens } = acts
  let throughput: EstimateResult['throughput'] = null
  let speed: EstimateResult['speed'] = null
  if (device) {
    const peakTflops = devicePeakTflops(device, precision, input.tf32)
    const flopsOpts = { gradCheckpointing: input.gradCheckpointing, lora, head: input.head }
    const hardwareFlops = flopsPerToken(spec, input.seq, flopsOpts)
    const modelFlops = input.gradCheckpointing
      ? flopsPerToken(spec, input.seq, { ...flopsOpts, gradCheckpointing: false })
      : hardwareFlops
    const tokensPerStep = tokens * input.gradAccum
    const sustainedShare = sustainedPeakShare(device, tuning.hopperSustainedShare, precision)
    const efficiency = (input.matmulEfficiency ?? tuning.matmulEfficiency) * sustainedShare
    // fp32 adapters, and experts a stack runs outside autocast, multiply at the fp32 (or TF32) rate while the
    // 16-bit rest runs on the tensor cores.
    const fp32Flops =
      (fp32Adapters ? adapterFlopsPerToken(spec, flopsOpts) : 0) +
      (expertsInFp32(input) ? expertFlopsPerToken(spec, input.gradCheckpointing) : 0)
    const fp32Time = fp32Flops > 0 ? fp32Flops / devicePeakTflops(device, 'fp32', input.tf32) : 0
    // Attention's products run at their own, lower rate: counted as if its FLOPs were that much larger.
    const attentionFlops = attentionFlopsPerToken(spec, input.seq, input.gradCheckpointing)
    const attentionExtra = attentionExtraFlops(input, attentionFlops, tuning.attentionEfficiency)
    // A vocabulary that is not a multiple of 8 puts the head's GEMMs on cuBLAS's slow unaligned kernels.
    const headExtra = unalignedHeadExtraFlops(input, held.params.fullTraining)
    const matmulSeconds =
      (tokensPerStep * ((hardwareFlops + attentionExtra + headExtra - fp32Flops) / peakTflops + fp32Time)) /
      (1e12 * efficiency)

    const bandwidth = device.memoryBandwidthGBs * 1e9 * BANDWIDTH_EFFICIENCY
    const memorySeconds = memoryTrafficSeconds(input, held, bandwidth)

    const unfused = input.optimizerImpl === 'fused' ? 1 : UNFUSED_OPTIMIZER_TRAFFIC_FACTOR
    const stepTraffic = OPTIMIZER_STEP_TRAFFIC[input.optimizer] * (stateBytes / 4) * unfused
    // Offloaded, each GPU has its own PCIe link, but the ranks of a node step their shards on one host's memory
    // bandwidth at the same time.
    const optimizerSeconds = offloadOptimizer
      ? (trainableShard * 2 * gradBytes) / (PCIE_EFFECTIVE_GBS * 1e9) +
        (input.gpus * trainableShard * OPTIMIZER_STEP_TRAFFIC[input.optimizer]) / (HOST_OPTIMIZER_GBS * 1e9)
      : (trainableShard * stepTraffic) / bandwidth
    // Offloaded weights cross PCIe for forward and backward in every micro-batch.
    const offloadSeconds = offloadAll
      ? (input.gradAccum * 2 * weightsTotal) / shardRanks / (PCIE_EFFECTIVE_GBS * 1e9)
      : 0

    // Data parallelism pays for its gradient (and, sharded, parameter) traffic on every rank.
    const scaling =
      input.interconnect === null
        ? 1
        : scalingEfficiency(input.gpus, input.nodes, input.sharding, input.interconnect)
    // The host issues the ops one at a time: each costs a fixed time, whatever its size (`hostDispatchSeconds`).
    const kernelSeconds = hostDispatchSeconds(input, tuning)
    const stepSeconds =
      (matmulSeconds + memorySeconds + kernelSeconds + optimizerSeconds + offloadSeconds) / scaling
    const perDevice = tokensPerStep / stepSeconds
    throughput = {
      tokensPerSecond: perDevice * ranks,
      tokensPerSecondPerDevice: perDevice,
      stepSeconds,
      mfu: (perDevice * modelFlops) / (peakTflops * 1e12),
    }
    speed = {
      flopsPerToken: hardwareFlops,
      peakTflops,
      computeShare: matmulSeconds / stepSeconds,
      sustainedShare,
    }
  }
  return { throughput, speed }
}

export type StepThroughput = ReturnType<typeof stepThroughput>

/** Seconds of one step's memory traffic: element-wise work, weight reads and dequantisation. */
function memoryTrafficSeconds(input: EstimateInput, held: HeldMemory, bandwidth: number): number {
  const { params, bytes, shards, acts } = held
  const spec = input.model
  const lora = input.lora
  const { parts, fullTraining } = params
  const { e, residualBytes, adapterBytes, frozenLinear, quantBytes } = bytes
  const { headMatmul } = shards
  const { tokens, block, logits } = acts
  const recompute = input.gradCheckpointing ? 4 / 3 : 1
  // Element-wise work moves every saved byte a few times; weights are read by forward and by each backward
  // matmul (one fewer for frozen weights); quantised weights are dequantised in every pass that uses them.
  // Under torch.compile the element-wise chains are fused: each saved byte is written and read back a few
  // times. Eager PyTorch runs every op on its own, so the block's traffic is counted op by op.
  const blockTraffic = input.compile
    ? ELEMENTWISE_TRAFFIC_PER_ACTIVATION_BYTE * block
    : eagerElementwiseBytes(
        spec,
        {
          elementBytes: e,
          residualBytes,
          attention: input.attention,
          lora,
          adapterBytes,
          pythonActivations: input.pythonActivations,
        },
        input.seq,
      )
  const elementwise =
    tokens * spec.layers * blockTraffic * recompute + ELEMENTWISE_TRAFFIC_PER_ACTIVATION_BYTE * logits
  const matmulWeights = spec.layers * parts.layerActive + headMatmul
  const weightReads = (fullTraining ? 3 : 2) * recompute * matmulWeights * e
  const dequant =
    !fullTraining && input.quant !== 'none'
      ? (input.gradCheckpointing ? 3 : 2) * frozenLinear * (quantBytes + 4)
      : 0
  return (input.gradAccum * (elementwise + weightReads + dequant)) / bandwidth
}
