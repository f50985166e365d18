import { adafactorStateElements, optimizerStateBytes } from '../estimate/optimizer.js'
import type { ModelSpec } from '../schemas/model-spec.js'
import type { Advice, Settings, TrainingPlan } from '../schemas/training-plan.js'
import { formatStackRef } from '../stack/stack-ref.js'
import { DEFAULT_STACK } from '../stack/stack-table.js'
import { RIGFIT_VERSION } from '../version.js'
import { planAdvice } from './advice.js'
import { effectiveBatchOf } from './batch.js'
import { calibratedSpeed } from './calibrated-speed.js'
import { datasetTokens, METHOD_ORDER, runHoursBound } from './candidates.js'
import { planCheckpoints } from './checkpoints.js'
import { compileWithQuant } from './compile-support.js'
import type { ComputeSettings } from './compute-settings.js'
import type { DecisionReader } from './decided.js'
import { describeDevices, describeWorkload } from './describe.js'
import { fewStepsWarning } from './few-steps.js'
import type { PlanRequest } from './generate.js'
import type { LadderResult } from './ladder.js'
import { learningRateFor, learningRateReason } from './learning-rate.js'
import type { ModeBudget } from './modes.js'
import { optimizationFor } from './optimization.js'
import { placeModels } from './placement.js'
import { estimatePower } from './power.js'
import { runtimeSettings } from './runtime-settings.js'
import type { Candidate } from './search.js'
import { traceSearch } from './search-trace.js'
import { strategyFor } from './strategy.js'
import { tokenBudget } from './token-budget.js'
import type { TrainingDevices } from './training-devices.js'

export interface AssembleInput {
  request: PlanRequest
  reader: DecisionReader
  advice: { warnings: Advice[]; suggestions: Advice[] }
  budget: ModeBudget
  devices: TrainingDevices
  ladder: LadderResult & { best: Candidate }
  compute: ComputeSettings
  memoryFraction: number
  frozen: { spec: ModelSpec; params: number }[]
  targetEffectiveBatch: number
  /** GPUs that hold a replica of the trained model: all of them, or 1 when models are split across GPUs. */
  dataParallelGpus: number
}

/** Turns the search's winner into a plan: settings, memory, speed, tokens, time, power, checkpoints, advice. */
export function assemblePlan(input: AssembleInput): TrainingPlan {
  const { request, reader, compute } = input
  const best = input.ladder.best
  const layout = trainingLayout(input)
  const relaxed = traceSearch({
    reader,
    mode: request.mode,
    workload: request.workload,
    budget: input.budget,
    ladder: input.ladder,
    budgetBytes: layout.budgetBytes,
    targetEffectiveBatch: input.targetEffectiveBatch,
    shape: { ...layout.shape, effectiveBatch: layout.effectiveBatch, strategy: layout.strategy },
    methodOrder: METHOD_ORDER[request.mode],
    precision: compute.precision,
  })
  if (relaxed) input.advice.warnings.push(relaxed)
  const runtime = runtimeSettings({
    reader,
    mode: request.mode,
    profile: request.profile,
    devices: input.devices,
    ranksPerNode: Math.max(1, layout.shape.gpus),
    compile: compute.compile,
    quantCompile: compileWithQuant(best.quant, request.options.stackVersions ?? null),
  })
  const run = runLength(input, layout, runtime.threads)
  const schedule = trainingSchedule(input, layout.effectiveBatch, run)
  const upkeep = powerAndCheckpoints(input, run)
  const settings = planSettings(input, layout, runtime, schedule)
  const { warnings, suggestions } = planAdvice({
    mode: request.mode,
    profile: request.profile,
    workload: request.workload,
    devices: input.devices,
    best,
    budget: input.budget,
    tokens: run.tokens,
    tokensPerStep: run.tokensPerStep,
    maxHours: run.maxHours,
    powerFraction: upkeep.powerFraction,
    totalHours: run.totalHours,
    power: upkeep.power,
    checkpoints: upkeep.checkpoints,
    effectiveBatch: layout.effectiveBatch,
    targetEffectiveBatch:
      request.workload.targetEffectiveBatch ??
      (request.options.baseBatch ? input.targetEffectiveBatch : null),
    decisions: request.decisions,
    generator: input.advice,
  })
  return planDocument(input, { layout, run, upkeep, settings, warnings, suggestions })
}

/** Where the winner runs: its memory budget, the placement of frozen models, the data-parallel shape, strategy. */
function trainingLayout(input: AssembleInput) {
  const { devices } = input
  const best = input.ladder.best
  const gpus = devices.gpus.length
  const cpuOnly = devices.kind === 'cpu'
  const budgetBytes = Math.floor(devices.capacityBytes * input.memoryFraction)
  const placement =
    input.frozen.length > 0
      ? placeModels({
          trainedId: best.model.id,
          trainedBytes: best.result.perDevice.total,
          frozen: input.frozen,
          gpus: Math.max(1, gpus),
          capacityBytes: budgetBytes,
        })
      : null
  const shape = {
    device: devices.kind,
    // GPUs in data parallel: with models split across GPUs, the trained model's one.
    gpus: cpuOnly ? 0 : input.dataParallelGpus,
    nodes: input.request.workload.nodes,
  }
  const effectiveBatch = effectiveBatchOf({
    ...shape,
    microBatch: best.microBatch,
    gradAccum: best.gradAccum,
  })
  const strategy = strategyFor({
    ...shape,
    sharding: best.sharding,
    offload: best.offload,
    modelSplit: placement?.strategy === 'model-split',
  })
  return { budgetBytes, placement, shape, effectiveBatch, strategy }
}
type TrainingLayout = ReturnType<typeof trainingLayout>

/** How fast the run goes and how long: calibrated speed, the token budget and the hours it takes. */
function runLength(input: AssembleInput, layout: TrainingLayout, threads: Settings['threads']) {
  const { request, reader, budget, devices } = input
  const { workload } = request
  const best = input.ladder.best
  const speed = calibratedSpeed({
    options: request.options,
    reader,
    best,
    devices,
    profile: request.profile,
    shape: layout.shape,
    threads,
  })
  const tps = speed.tokensPerSecond
  const tokensPerStep = layout.effectiveBatch * best.seq
  const maxHours = runHoursBound(workload, budget)
  const tokens = tokenBudget({
    params: best.result.params.total,
    tokensPerParam: budget.tokensPerParam,
    tokensPerSecond: tps,
    maxHours,
    kind: workload.kind,
    datasetTokens: datasetTokens(workload),
    epochs: workload.epochs ?? null,
    targetTokens: workload.targetTokens ?? null,
    tokensPerStep,
  })
  const totalHours = tps > 0 ? tokens.budget / tps / 3600 : 0
  return { speed, tps, tokensPerStep, maxHours, tokens, totalHours }
}
type RunLength = ReturnType<typeof runLength>

/** The learning rate and its schedule for the run's steps, and a warning when there are too few steps. */
function trainingSchedule(input: AssembleInput, effectiveBatch: number, run: RunLength) {
  const { reader } = input
  const { workload } = input.request
  const best = input.ladder.best
  const learningRate = learningRateFor(best, workload, run.tokens.budget)
  reader.settle('learningRate', learningRate, learningRateReason(best, workload, run.tokens.budget))
  const optimization = optimizationFor(workload.kind, best.method, run.tokens.steps ?? 0)
  reader.settle('optimization', optimization.value, optimization.reason)
  const fewSteps = fewStepsWarning(workload, effectiveBatch, best.seq, run.tokens.steps ?? 0)
  if (fewSteps) input.advice.warnings.push(fewSteps)
  return { learningRate, optimization: optimization.value }
}

/** The power the mode allows and draws over the run, and the checkpoints the run keeps on disk. */
function powerAndCheckpoints(input: AssembleInput, run: RunLength) {
  const { reader, budget, devices } = input
  const { profile, workload, mode, options } = input.request
  const best = input.ladder.best
  const powerFraction = Math.min(
    reader.preferred('powerFraction', budget.tdpFraction),
    reader.cap('powerFraction') ?? 1,
  )
  reader.settle(
    'powerFraction',
    powerFraction,
    `${mode} mode holds the devices to ${Math.round(powerFraction * 100)}% of their TDP`,
  )
  const power = estimatePower({
    deviceTdpWatts: devices.tdpWatts,
    devicePowerLimitWatts: devices.powerLimitWatts,
    tdpFraction: powerFraction,
    physicalCores: profile.cpu.physicalCores,
    cpuOnly: devices.kind === 'cpu',
    hours: run.totalHours,
    psuWatts: options.psuWatts ?? null,
    unifiedMemory: devices.gpus.some((gpu) => gpu.unifiedMemory),
  })
  const biggestDisk = [...profile.storage].sort((a, b) => b.freeBytes - a.freeBytes)[0]
  const checkpoints = planCheckpoints({
    totalHours: run.totalHours,
    checkpointBytes: checkpointSize(best),
    kept: budget.checkpointsKept,
    datasetCacheBytes: workload.datasetBytes ?? run.tokens.budget * tokenIdBytes(best.model.vocab),
    diskFreeBytes: biggestDisk?.freeBytes ?? null,
  })
  return { powerFraction, power, checkpoints }
}

/** Every training setting of the plan, from the winner, the compute settings and the runtime. */
function planSettings(
  input: AssembleInput,
  layout: TrainingLayout,
  runtime: ReturnType<typeof runtimeSettings>,
  schedule: ReturnType<typeof trainingSchedule>,
): Settings {
  const { compute } = input
  const best = input.ladder.best
  return {
    ...layout.shape,
    microBatch: best.microBatch,
    gradAccum: best.gradAccum,
    effectiveBatch: layout.effectiveBatch,
    seq: best.seq,
    precision: best.precision,
    optimizer: best.optimizer,
    fusedOptimizer: compute.fusedOptimizer,
    gradCheckpointing: best.gradCheckpointing,
    attention: best.attention,
    sharding: best.sharding,
    offload: best.offload,
    method: best.method,
    lora: best.lora ? { rank: best.lora.rank, targets: [...best.lora.targets] } : null,
    quant: best.quant,
    compile: runtime.compile,
    tf32: compute.tf32,
    cudnnBenchmark: runtime.cudnnBenchmark,
    backend: runtime.backend,
    strategy: layout.strategy,
    threads: runtime.threads,
    dataloader: runtime.dataloader,
    learningRate: schedule.learningRate,
    optimization: schedule.optimization,
  }
}

/** The plan document: hardware, workload, model, settings, memory, speed, tokens, time, power, advice, trace. */
function planDocument(
  input: AssembleInput,
  parts: {
    layout: TrainingLayout
    run: RunLength
    upkeep: ReturnType<typeof powerAndCheckpoints>
    settings: Settings
    warnings: Advice[]
    suggestions: Advice[]
  },
): TrainingPlan {
  const { request, devices } = input
  const { profile, workload, mode, options } = request
  const { run, upkeep } = parts
  const best = input.ladder.best
  const nodes = workload.nodes
  const throughput = run.speed.throughput
  return {
    schemaVersion: 1,
    rigfitVersion: RIGFIT_VERSION,
    createdAt: options.createdAt,
    mode,
    stack: formatStackRef(options.stack ?? DEFAULT_STACK),
    hardware: {
      summary: describeDevices(devices) + (nodes > 1 ? ` x ${nodes} nodes` : ''),
      gpuName: devices.kind === 'cpu' ? null : devices.name,
      gpus: devices.gpus.length,
      nodes,
      computeCapability: devices.computeCapability,
      deviceMemoryBytes: devices.capacityBytes,
      hostMemoryBytes: profile.memory.usableBytes,
      profileSource: profile.source,
    },
    workload: {
      kind: workload.kind,
      description: describeWorkload(workload, best),
      ...(workload.dataset ? { dataset: workload.dataset } : {}),
    },
    // A model trained from scratch is built for the sequence length it trains at.
    model: best.model.source === 'generated' ? { ...best.model, maxPositions: best.seq } : best.model,
    params: { total: best.result.params.total, trainable: best.result.params.trainable },
    settings: parts.settings,
    memory: {
      perDevice: best.result.perDevice,
      hostBytes: best.result.host.total,
      capacityBytes: devices.capacityBytes,
      budgetFraction: input.memoryFraction,
      usedFraction: devices.capacityBytes > 0 ? best.deviceBytes / devices.capacityBytes : 0,
    },
    // The estimate's own figures for the job, so `rigfit estimate` with these settings gives the same.
    throughput: {
      tokensPerSecond: run.tps,
      tokensPerSecondPerDevice: throughput?.tokensPerSecondPerDevice ?? 0,
      stepSeconds: throughput?.stepSeconds ?? 0,
      mfu: throughput?.mfu ?? 0,
    },
    ...(run.speed.calibration ? { calibration: run.speed.calibration } : {}),
    tokens: {
      budget: run.tokens.budget,
      tokensPerParam: run.tokens.tokensPerParam,
      chinchillaTokens: run.tokens.chinchillaTokens,
      timeBudgetTokens: run.tokens.timeBudgetTokens,
      binding: run.tokens.binding,
    },
    time: { totalHours: run.totalHours, steps: run.tokens.steps ?? 0 },
    power: upkeep.power,
    checkpoints: upkeep.checkpoints,
    placement: parts.layout.placement?.devices ?? null,
    warnings: parts.warnings,
    suggestions: parts.suggestions,
    trace: input.reader.trace,
  }
}

/** Stored token ids (uint16 for vocabularies up to 65 536, else uint32). */
const tokenIdBytes = (vocab: number) => (vocab <= 65_536 ? 2 : 4)

/**
 * A checkpoint holds the trained weights in fp32 and their optimizer states (fp32 states, or the 8-bit ones): the
 * full state for full training, the adapters for LoRA.
 */
function checkpointSize(best: Candidate): number {
  const trainable = best.result.params.trainable
  const states = optimizerStateBytes(best.optimizer, trainable, 4, () =>
    adafactorStateElements(best.model, best.lora, best.result.params.total),
  )
  return trainable * 4 + states
}
