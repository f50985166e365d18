import { RigfitError } from '../errors.js'
import { countParams } from '../model/index.js'
import type { CalibrationRecord } from '../schemas/calibration-record.js'
import type { Mode } from '../schemas/common.js'
import type { Decisions } from '../schemas/decisions.js'
import type { HardwareProfile } from '../schemas/hardware-profile.js'
import type { StackRef } from '../schemas/stack.js'
import type { Advice, TrainingPlan } from '../schemas/training-plan.js'
import type { Workload } from '../schemas/workload.js'
import { resolveStack } from '../stack/resolve-stack.js'
import { DEFAULT_STACK } from '../stack/stack-table.js'
import { gibText } from '../units.js'
import { assemblePlan } from './assemble.js'
import {
  microBatchCeiling,
  minEffectiveBatch,
  sequencesForSteps,
  targetEffectiveBatch,
} from './batch-target.js'
import {
  datasetTokens,
  METHOD_ORDER,
  type Method,
  microBatchSteps,
  modelCandidates,
  runHoursBound,
  sequenceCandidates,
  shorterSequences,
} from './candidates.js'
import type { StackVersions } from './compile-support.js'
import { type ComputeSettings, computeSettings } from './compute-settings.js'
import { DecisionReader } from './decided.js'
import { describeDevices } from './describe.js'
import { extremeShapeAdvice } from './extreme-shape.js'
import { type BaseSpace, climbLadder, type LadderResult, ladderRungs } from './ladder.js'
import { MODE_BUDGETS, type ModeBudget } from './modes.js'
import { contextLimitError, deviceMemoryError, hostRamError } from './no-fit.js'
import { checkPins, methodsAllowedByPins, pinTraces, pinWarnings } from './pins.js'
import { placeModels } from './placement.js'
import type { Candidate } from './search.js'
import { selectTrainingDevices, type TrainingDevices } from './training-devices.js'

export interface PlanOptions {
  /** The power supply's rating, for headroom warnings. */
  psuWatts?: number | null
  /** Per-GPU micro-batch wanted on one GPU (elastic base batch): effective = base x GPUs x nodes. */
  baseBatch?: number | null
  /** Share of device memory to use, overriding the mode's. */
  targetUtilization?: number | null
  /** Use at most this many GPUs. */
  maxGpus?: number | null
  /** When the plan was made (ISO 8601): the caller reads the clock, so planning stays a pure function. */
  createdAt: string
  /**
   * This machine's calibration records (read by the caller) and the stack that will train: the plan's speed is
   * corrected from the nearest of them. Absent: the store is not consulted and the plan carries no `calibration`.
   */
  calibration?: { records: readonly CalibrationRecord[]; stack: string | null } | undefined
  /** The library versions of the stack that will run the plan, where known; null or absent: unknown. */
  stackVersions?: StackVersions | null
  /** The stack that will run the plan; default `hf`, the one most exports run. */
  stack?: StackRef | undefined
}

export interface PlanRequest {
  profile: HardwareProfile
  workload: Workload
  mode: Mode
  decisions: Decisions
  options: PlanOptions
}

/** Host RAM a run may plan on for offloaded states, as a share of usable RAM. */
const HOST_OFFLOAD_SHARE = 0.8

/**
 * Builds the best plan for one mode within its budget: the lever ladder (ladder.ts) finds the cheapest way to
 * fit, the ranking (rank.ts) the best setup on that rung, and assemblePlan the rest. Deterministic: same inputs,
 * same plan.
 */
export function generatePlan(request: PlanRequest): TrainingPlan {
  const { profile, workload, mode } = request
  const reader = new DecisionReader(request.decisions, pinTraces(workload))
  const advice: { warnings: Advice[]; suggestions: Advice[] } = { warnings: [], suggestions: [] }
  const budget = effectiveBudget(MODE_BUDGETS[mode], profile, advice)
  const devices = trainingDevicesFor(request, reader)
  const gpus = devices.gpus.length
  const memoryFraction = memoryFractionFor(request, reader, budget, devices)
  const budgetBytes = Math.floor(devices.capacityBytes * memoryFraction)
  const pins = workload.pins ?? {}
  checkPins(workload, devices.gpus.length)
  const compute = computeSettings(reader, devices, pins)
  advice.warnings.push(...pinWarnings(pins, devices.estimateDevice))
  const companions = companionPlacement(workload, gpus, budgetBytes)
  const setup: SearchSetup = {
    request,
    reader,
    devices,
    compute,
    dataParallelGpus: companions.dataParallelGpus,
    frozenBytes: companions.frozenBytes,
  }
  const contextLimit = contextLimitError(workload, mode, gpus)
  if (contextLimit) throw contextLimit
  const { ladder, targetFor, methods } = searchMode(setup, mode, budget, budgetBytes)
  const best = winnerOrNoFit(request, ladder, { devices, budgetBytes, methods })
  if (mode === 'extreme' && workload.kind === 'finetune') {
    const shape = extremeShapeWarning(setup, best, memoryFraction)
    if (shape) advice.warnings.push(shape)
  }
  return assemblePlan({
    request,
    reader,
    advice,
    budget,
    devices,
    ladder: { ...ladder, best },
    compute,
    memoryFraction,
    frozen: companions.frozen,
    targetEffectiveBatch: targetFor,
    dataParallelGpus: companions.dataParallelGpus,
  })
}

/** The devices that train, at most the packs' or the user's GPU count; a Mac trains on one node. */
function trainingDevicesFor(request: PlanRequest, reader: DecisionReader): TrainingDevices {
  const { workload, mode } = request
  const devices = selectTrainingDevices(
    request.profile,
    reader.cap('gpus') ?? request.options.maxGpus ?? null,
  )
  // PyTorch has no collective backend for mps tensors (DeepSpeed's mps accelerator has none either), so Macs
  // cannot train one model together: a plan for several of them would contradict itself.
  if (devices.kind === 'mps' && workload.nodes > 1) {
    throw new RigfitError(
      'fit',
      'E_MPS_ONE_NODE',
      `No ${mode} configuration trains on ${workload.nodes} nodes of ${describeDevices(devices)}: mps has no distributed backend, so a Mac trains alone.`,
      { suggestion: 'Plan for one Mac (--nodes 1), or for GPU nodes with --gpu NAME or --instance.' },
    )
  }
  return devices
}

/** The share of usable device memory the plan may use: --target-util or the mode's, under the packs' cap. */
function memoryFractionFor(
  request: PlanRequest,
  reader: DecisionReader,
  budget: ModeBudget,
  devices: TrainingDevices,
): number {
  const { options, mode } = request
  const memoryFraction = Math.min(
    options.targetUtilization ?? reader.preferred('memoryFraction', budget.memoryFraction),
    reader.cap('memoryFraction') ?? 1,
  )
  reader.settle(
    'memoryFraction',
    memoryFraction,
    options.targetUtilization
      ? `--target-util asks for ${Math.round(memoryFraction * 100)}% of usable device memory`
      : `${mode} mode uses at most ${Math.round(memoryFraction * 100)}% of usable device memory`,
    { capacityBytes: devices.capacityBytes },
  )
  return memoryFraction
}

/**
 * Frozen companion models are placed first. When they do not all fit beside the trained model on every GPU,
 * each goes to a GPU of its own and the trained model trains on GPU 0 alone, without data parallelism.
 */
function companionPlacement(workload: Workload, gpus: number, budgetBytes: number) {
  const frozen = workload.frozenModels.map((spec) => ({ spec, params: countParams(spec).total }))
  const probe =
    frozen.length > 0
      ? placeModels({
          trainedId: 'trained',
          trainedBytes: workload.model ? countParams(workload.model).total * 2 : 0,
          frozen,
          gpus: Math.max(1, gpus),
          capacityBytes: budgetBytes,
        })
      : null
  return {
    frozen,
    dataParallelGpus: probe?.strategy === 'model-split' ? 1 : gpus,
    frozenBytes: probe?.frozenBytesOnTrainingGpu ?? 0,
  }
}

/** The search's winner, or the no-fit error that names the binding limit: host RAM or device memory. */
function winnerOrNoFit(
  request: PlanRequest,
  ladder: LadderResult,
  searched: { devices: TrainingDevices; budgetBytes: number; methods: Method[] },
): Candidate {
  const { profile, workload, mode } = request
  const { devices, budgetBytes, methods } = searched
  const gpus = devices.gpus.length
  if ((!ladder.best || !ladder.rung) && ladder.hostNeedBytes !== null) {
    // Setups that fit the GPU were ruled out by host RAM (offloaded states): name the binding limit.
    const hostBudget = profile.memory.usableBytes * HOST_OFFLOAD_SHARE
    throw hostRamError(
      `No ${mode} configuration fits: setups that fit ${describeDevices(devices)} (${gibText(budgetBytes)} GiB budget) keep offloaded states in host RAM and need at least ${gibText(ladder.hostNeedBytes)} GiB of it; rigfit may use ${gibText(hostBudget)} GiB of this machine's RAM.`,
      workload,
      methods,
      gpus,
      { budgetBytes, hostNeedBytes: ladder.hostNeedBytes, hostBudgetBytes: hostBudget },
    )
  }
  if (!ladder.best || !ladder.rung) {
    throw deviceMemoryError(
      `No ${mode} configuration fits ${describeDevices(devices)} (${gibText(budgetBytes)} GiB budget).`,
      workload,
      methods,
      gpus,
      { budgetBytes, leastNeedBytes: ladder.leastBytes },
    )
  }
  return ladder.best
}

/** Balanced's plan for the same model, searched the same way, to say why extreme is slower when it is. */
function extremeShapeWarning(setup: SearchSetup, best: Candidate, memoryFraction: number): Advice | null {
  const { devices, request } = setup
  const balanced = effectiveBudget(MODE_BUDGETS.balanced, request.profile, { warnings: [] })
  const bytes = Math.floor(devices.capacityBytes * Math.min(balanced.memoryFraction, memoryFraction))
  const reference = searchMode(setup, 'balanced', balanced, bytes).ladder.best
  return reference ? extremeShapeAdvice(best, reference) : null
}

interface SearchSetup {
  request: PlanRequest
  reader: DecisionReader
  devices: TrainingDevices
  compute: ComputeSettings
  dataParallelGpus: number
  frozenBytes: number
}

/** The lever ladder of one mode, climbed: the cheapest rung that fits and the best setup on it. */
function searchMode(
  setup: SearchSetup,
  mode: Mode,
  budget: ModeBudget,
  budgetBytes: number,
): { ladder: LadderResult; targetFor: number; methods: Method[] } {
  const { request, reader, devices, compute } = setup
  const { profile, workload } = request
  const pins = workload.pins ?? {}
  const options = request.options
  const nodes = workload.nodes
  const seqCap = reader.cap('seq') ?? Number.POSITIVE_INFINITY
  const seqs = sequencesForSteps(workload, sequenceCandidates(workload, budget, seqCap))
  const targetFor = targetEffectiveBatch({
    workload,
    baseBatch: options.baseBatch ?? null,
    mode,
    budget,
    gpus: setup.dataParallelGpus,
    nodes,
    seq: seqs[0] ?? budget.seqRange[1],
  })
  const mbCap = reader.cap('microBatch') ?? Number.POSITIVE_INFINITY
  const base: BaseSpace = {
    models: modelCandidates(workload, budget),
    // A pinned micro-batch is the user's, above the mode's range or a pack's cap as well.
    microBatches:
      pins.microBatch !== undefined
        ? [pins.microBatch]
        : microBatchSteps(
            Math.min(
              budget.microBatchRange[1],
              mbCap,
              microBatchCeiling(targetFor, setup.dataParallelGpus, nodes),
            ),
          ).filter((mb) => (options.baseBatch ? mb <= options.baseBatch : true)),
    gradAccum: pins.gradAccum ?? null,
    precision: compute.precision,
    attention: compute.attention,
    fusedOptimizer: compute.fusedOptimizer,
    compile: compute.compile,
    tf32: compute.tf32,
    stack: resolveStack(options.stack ?? DEFAULT_STACK).mechanisms,
    gpus: setup.dataParallelGpus,
    nodes,
    interconnect: profile.interconnect.kind,
    targetEffectiveBatch: targetFor,
    targetBatchSeq: recipeBatchSeq(workload, options, seqs[0] ?? budget.seqRange[1]),
    minEffectiveBatch: minEffectiveBatch(workload, options.baseBatch ?? null),
    stackVersions: options.stackVersions ?? null,
    budgetBytes,
    hostBudgetBytes: profile.memory.usableBytes * HOST_OFFLOAD_SHARE,
    frozenBytes: setup.frozenBytes,
    tokenTarget: (params) =>
      workload.kind === 'pretrain'
        ? (workload.targetTokens ?? params * budget.tokensPerParam)
        : (datasetTokens(workload) ?? Number.POSITIVE_INFINITY) * (workload.epochs ?? 1),
    maxHours: runHoursBound(workload, budget) ?? Number.POSITIVE_INFINITY,
    exactTarget: workload.targetEffectiveBatch !== null || Boolean(options.baseBatch),
  }
  const methods = methodsFor(workload, mode, reader, devices)
  const rungs = ladderRungs({
    base,
    reader,
    mode,
    deviceKind: devices.kind,
    methods,
    methodPinned: workload.method !== 'auto' || workload.kind === 'pretrain',
    optimizer: compute.optimizer,
    seqs,
    shorterSeqs: shorterSequences(workload, seqs, seqCap),
    pins,
  })
  const ladder = climbLadder(rungs, devices, {
    fillMemory: mode === 'extreme',
    microBatchRange: budget.microBatchRange,
  })
  return { ladder, targetFor, methods }
}

/** Running on battery holds every mode to conservative limits. */
function effectiveBudget(
  budget: ModeBudget,
  profile: HardwareProfile,
  advice: { warnings: Advice[] },
): ModeBudget {
  if (!profile.power.onBattery || budget.mode === 'conservative') return budget
  const conservative = MODE_BUDGETS.conservative
  advice.warnings.push({
    id: 'on-battery-limits',
    message: `Running on battery: the ${budget.mode} plan is held to conservative memory, power and time limits. Plug in for the full plan.`,
    source: 'generator',
    expectedGain: null,
  })
  return {
    ...budget,
    memoryFraction: conservative.memoryFraction,
    tdpFraction: conservative.tdpFraction,
    hoursRange: conservative.hoursRange,
  }
}

/**
 * The methods the search may use, in the mode's order: pretraining trains fully; a method the user named is the
 * only one; forbidden ones are left out, and QLoRA on the CPU (bitsandbytes' 4-bit kernels need a GPU).
 */
function methodsFor(
  workload: Workload,
  mode: Mode,
  reader: DecisionReader,
  devices: TrainingDevices,
): Method[] {
  if (workload.kind === 'pretrain') return methodsAllowedByPins(workload)
  const pinned = methodsAllowedByPins(workload)
  const order = (workload.method !== 'auto' ? [workload.method] : METHOD_ORDER[mode]).filter((method) =>
    pinned.includes(method),
  )
  return reader.allowed('method', order).filter((method) => !(method === 'qlora' && devices.kind === 'cpu'))
}

/** The sequence a pretraining recipe's batch was sized for (its tokens per step hold at shorter ones), else null. */
function recipeBatchSeq(workload: Workload, options: PlanOptions, longestSeq: number): number | null {
  return workload.kind === 'pretrain' && !workload.targetEffectiveBatch && !options.baseBatch
    ? longestSeq
    : null
}
