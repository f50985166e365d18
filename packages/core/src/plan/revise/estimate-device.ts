import { RigfitError } from '../../errors.js'
import { estimate } from '../../estimate/estimate.js'
import { flopsPerToken } from '../../estimate/flops.js'
import { scalingEfficiency } from '../../estimate/scaling.js'
import type { EstimateDevice } from '../../schemas/estimate.js'
import type { TrainingPlan } from '../../schemas/training-plan.js'
import { processesPerNode } from '../batch.js'
import { estimateInputAt, planPoint } from './estimate-input.js'

/** A trial bandwidth for the calibration below; any positive figure gives the same result. */
const TRIAL_BANDWIDTH_GBS = 1000

function speedError(plan: TrainingPlan, detail: string): RigfitError {
  return new RigfitError(
    'validation',
    'E_PLAN_SPEED',
    `the plan's throughput (${Math.round(plan.throughput.tokensPerSecondPerDevice)} tokens/s per device, MFU ${plan.throughput.mfu}) cannot be re-estimated: ${detail}`,
    { suggestion: 'Regenerate the plan with `rigfit plan`, or restore throughput and mfu as it wrote them.' },
  )
}

/**
 * The device the plan was estimated for, recovered from the plan's own figures; a plan stores the GPU's name,
 * memory and compute capability but not its rates.
 *
 * - Peak rate: the planner reports tokens/s per device and MFU both multiplied by the same scaling efficiency,
 *   and MFU = tokens/s x model FLOPs per token / peak, so their ratio gives the peak the estimate used for the
 *   plan's precision exactly. The device offers that one rate for every precision.
 * - Memory bandwidth: the estimator's step time is a matmul part, a part that crosses PCIe, and memory traffic
 *   divided by the bandwidth. Two estimates at trial bandwidths separate the parts; the bandwidth is the one
 *   whose step time gives the plan's tokens/s. The plan's speed is net of a scaling efficiency it does not
 *   record (it depends on the interconnect): the fast-interconnect figure is taken, the highest one, which never
 *   leaves the memory part negative for a plan the planner wrote; a plan written with a higher MFU than the
 *   estimator reaches gets no efficiency loss at all, and one beyond even that is refused.
 *
 * Estimating the plan's own settings on this device reproduces the plan's speed; changed settings move it the
 * way the estimator says they do.
 */
export function planEstimateDevice(plan: TrainingPlan): EstimateDevice {
  const s = plan.settings
  const perDevice = plan.throughput.tokensPerSecondPerDevice
  const mfu = plan.throughput.mfu
  if (!(perDevice > 0 && mfu > 0)) throw speedError(plan, 'both must be above zero')
  const head = plan.model.kind === 'encoder' ? 'classification' : 'lm'
  const lora = estimateInputAt(plan, planPoint(plan), null).lora
  const modelFlops = flopsPerToken(plan.model, s.seq, { gradCheckpointing: false, lora, head })
  const peakTflops = (perDevice * modelFlops) / mfu / 1e12
  const device = (memoryBandwidthGBs: number): EstimateDevice => ({
    name: plan.hardware.gpuName ?? s.device,
    kind: s.device,
    vramBytes: plan.memory.capacityBytes,
    fp16TensorTflops: peakTflops,
    fp32Tflops: peakTflops,
    memoryBandwidthGBs,
    bf16: true,
    tf32: s.tf32,
    computeCapability: plan.hardware.computeCapability,
  })
  const stepSeconds = (bandwidth: number) =>
    estimate(estimateInputAt(plan, planPoint(plan), device(bandwidth))).throughput?.stepSeconds ?? 0
  // step(B) = fixed + traffic / B: two trial bandwidths give both terms.
  const slow = stepSeconds(TRIAL_BANDWIDTH_GBS)
  const fast = stepSeconds(2 * TRIAL_BANDWIDTH_GBS)
  const trafficSeconds = 2 * (slow - fast)
  const fixedSeconds = slow - trafficSeconds
  const tokensPerStep = s.microBatch * s.seq * s.gradAccum
  for (const efficiency of [scalingEfficiency(processesPerNode(s), s.nodes, s.sharding, 'nvlink'), 1]) {
    const memorySeconds = tokensPerStep / (perDevice / efficiency) - fixedSeconds
    if (trafficSeconds > 0 && memorySeconds > 0) {
      return device((TRIAL_BANDWIDTH_GBS * trafficSeconds) / memorySeconds)
    }
  }
  throw speedError(
    plan,
    `at the implied peak of ${peakTflops.toFixed(1)} TFLOPS the matrix multiplies alone take longer`,
  )
}
