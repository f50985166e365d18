import {
  type EstimateDevice,
  type EstimateResult,
  estimate,
  estimateInputAt,
  planEstimateDevice,
  planPoint,
  processesPerNode,
  RigfitError,
  scalingEfficiency,
  type TrainingPlan,
} from '@rigfit/core'
import type { HostCpuDevice } from '../sampling/host-cpu-device.js'
import { formatGiB } from '../view/format.js'
import { copyPower } from './copy-power.js'

/** Reads the CPU a failover moves training onto, given the memory it may use. */
export type HostCpuReader = (memoryBytes: number) => HostCpuDevice

/** A plan copy's re-estimated figures and, in words, what was re-estimated and what had to be assumed. */
export interface ReestimatedCopy {
  plan: TrainingPlan
  note: string
}

type Settings = TrainingPlan['settings']

/**
 * Re-estimates a plan copy whose settings differ from the plan's. Memory is the estimator's figure for the new
 * settings. Speed is calibrated on the plan: the device the plan was estimated for is recovered from its own
 * figures (planEstimateDevice), and the copy's speed is the plan's moved by the estimator's ratio between the
 * two settings and by the change of multi-GPU scaling. On the CPU after a GPU failover nothing of the plan
 * carries over: the estimate runs on this machine's CPU. Time follows from the plan's token budget at the new
 * speed, power from the devices (copyPower).
 */
export function reestimateCopy(
  plan: TrainingPlan,
  copy: TrainingPlan,
  readHostCpu: HostCpuReader,
): ReestimatedCopy {
  const before = plan.settings
  const after = copy.settings
  const assumed: string[] = []
  const target = speedTarget(plan, copy, readHostCpu, assumed)
  const { toCpu, capacity, speedDevice, host } = target
  const input = estimateInputAt(copy, planPoint(copy), speedDevice)
  // The CPU has no CUDA context; on the GPUs the plan's own context size is kept, as the exporters do.
  const next = estimate(toCpu ? { ...input, cudaContextBytes: null } : input)

  const throughput = next.throughput ? speedOf(plan, after, next.throughput, target.base) : plan.throughput
  const tokensPerStep = after.effectiveBatch * after.seq
  const budget = plan.tokens.budget
  const totalHours =
    next.throughput === null
      ? plan.time.totalHours
      : throughput.tokensPerSecond > 0
        ? budget / throughput.tokensPerSecond / 3600
        : 0
  const power = copyPower(
    {
      plan,
      gpus: after.gpus,
      hours: totalHours,
      physicalCores: () => (host ?? readHostCpu(plan.hardware.hostMemoryBytes)).physicalCores,
    },
    assumed,
  )
  if (after.precision !== before.precision && speedDevice !== null && !toCpu) {
    assumed.push(
      `the speed at ${after.precision} uses the matrix rate the plan implies for ${before.precision} (a plan does not record the device’s other rates)`,
    )
  }
  const deviceBytes = next.perDevice.total + companionBytes(plan)
  const reestimated: TrainingPlan = {
    ...copy,
    hardware: target.hardware,
    memory: {
      ...plan.memory,
      perDevice: next.perDevice,
      hostBytes: next.host.total,
      capacityBytes: capacity,
      usedFraction: capacity > 0 ? deviceBytes / capacity : 0,
    },
    throughput,
    time: {
      totalHours,
      steps: tokensPerStep > 0 ? Math.ceil(budget / tokensPerStep) : 0,
    },
    power,
  }
  return { plan: reestimated, note: reestimateNote(plan, after, next, throughput, assumed) }
}

/**
 * The device the copy's speed is estimated on, and the plan's own speed there: the host CPU when the copy moves
 * to the CPU (its hardware then says so), else the plan's device as its figures imply it.
 */
function speedTarget(plan: TrainingPlan, copy: TrainingPlan, readHostCpu: HostCpuReader, assumed: string[]) {
  const toCpu = copy.settings.device === 'cpu' && plan.settings.device !== 'cpu'
  const capacity = toCpu ? plan.hardware.hostMemoryBytes : plan.memory.capacityBytes
  let speedDevice: EstimateDevice | null
  let base: EstimateResult['throughput'] = null
  let hardware = copy.hardware
  let host: HostCpuDevice | null = null
  if (toCpu) {
    host = readHostCpu(capacity)
    speedDevice = host.device
    assumed.push(...host.assumed.map((figure) => `the CPU's ${figure} is assumed`))
    hardware = {
      ...hardware,
      summary: `CPU (${host.device.name}) after losing the GPUs of ${plan.hardware.summary}`,
      gpuName: null,
      computeCapability: null,
      deviceMemoryBytes: capacity,
    }
  } else {
    speedDevice = calibratedDevice(plan, assumed)
    if (speedDevice !== null) base = estimate(estimateInputAt(plan, planPoint(plan), speedDevice)).throughput
  }
  return { toCpu, capacity, speedDevice, base, hardware, host }
}

/** What was re-estimated, the new memory and speed against the plan's, and what had to be assumed. */
function reestimateNote(
  plan: TrainingPlan,
  after: TrainingPlan['settings'],
  next: EstimateResult,
  throughput: TrainingPlan['throughput'],
  assumed: string[],
): string {
  const before = plan.settings
  const speed =
    next.throughput === null
      ? 'speed kept as the plan’s'
      : `${Math.round(throughput.tokensPerSecond)} tokens/s (plan: ${Math.round(plan.throughput.tokensPerSecond)})`
  return (
    `memory and speed re-estimated for ${describeChanges(before, after)}: ` +
    `${formatGiB(next.perDevice.total)} GiB per ${after.device === 'cpu' ? 'CPU' : 'device'} (plan: ${formatGiB(plan.memory.perDevice.total)} GiB), ${speed}` +
    (assumed.length > 0 ? `; ${assumed.join('; ')}` : '')
  )
}

/** The plan's own device, or null (with the reason among the notes) when its speed figures cannot calibrate one. */
function calibratedDevice(plan: TrainingPlan, notes: string[]): EstimateDevice | null {
  try {
    return planEstimateDevice(plan)
  } catch (error) {
    if (!(error instanceof RigfitError)) throw error
    notes.push(error.message)
    return null
  }
}

/**
 * Intra-node scaling at the fast-interconnect figure, the one planEstimateDevice calibrates with (a plan does not
 * record its interconnect); with one process per node only the inter-node factor remains.
 */
function scaling(settings: Settings): number {
  return scalingEfficiency(processesPerNode(settings), settings.nodes, settings.sharding, 'nvlink')
}

function speedOf(
  plan: TrainingPlan,
  after: Settings,
  next: NonNullable<EstimateResult['throughput']>,
  base: EstimateResult['throughput'],
): TrainingPlan['throughput'] {
  // Without a base (the CPU) the estimate stands on its own; with one, the plan's figures are the anchor.
  const speedAnchor = base
    ? plan.throughput.tokensPerSecondPerDevice / (base.tokensPerSecondPerDevice * scaling(plan.settings))
    : 1
  const mfuAnchor = base ? plan.throughput.mfu / (base.mfu * scaling(plan.settings)) : 1
  const tokensPerSecondPerDevice = next.tokensPerSecondPerDevice * scaling(after) * speedAnchor
  const tokensPerSecond = tokensPerSecondPerDevice * processesPerNode(after) * after.nodes
  return {
    tokensPerSecond,
    tokensPerSecondPerDevice,
    stepSeconds: tokensPerSecond > 0 ? (after.effectiveBatch * after.seq) / tokensPerSecond : 0,
    mfu: next.mfu * scaling(after) * mfuAnchor,
  }
}

/**
 * Frozen companion models the planner placed beside the trained one: its used share of memory counts them, its
 * per-device breakdown (the trained model's estimate) does not.
 */
function companionBytes(plan: TrainingPlan): number {
  if (!plan.placement) return 0
  const used = plan.memory.usedFraction * plan.memory.capacityBytes
  return Math.max(0, Math.round(used - plan.memory.perDevice.total))
}

/** What the copy changes against the plan, in words. */
export function describeChanges(before: Settings, after: Settings): string {
  const changes: string[] = []
  const where = (s: Settings) =>
    s.device === 'cpu'
      ? 'the CPU'
      : `${s.gpus} ${s.device === 'cuda' ? 'GPU' : s.device.toUpperCase()}${s.gpus === 1 ? '' : 's'}`
  if (after.device !== before.device || after.gpus !== before.gpus)
    changes.push(`${where(before)} → ${where(after)}`)
  if (after.microBatch !== before.microBatch)
    changes.push(`micro-batch ${before.microBatch} → ${after.microBatch}`)
  if (after.gradAccum !== before.gradAccum)
    changes.push(`gradient accumulation ${before.gradAccum} → ${after.gradAccum}`)
  if (after.gradCheckpointing !== before.gradCheckpointing)
    changes.push(`gradient checkpointing ${after.gradCheckpointing ? 'on' : 'off'}`)
  if (after.precision !== before.precision) changes.push(`precision ${before.precision} → ${after.precision}`)
  if (after.attention !== before.attention) changes.push(`attention ${before.attention} → ${after.attention}`)
  return changes.join(', ')
}
