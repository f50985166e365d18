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
  const { request, reader, budget, devices, compute } = input
  const best = input.ladder.best
  const { profile, workload, mode } = request
  const options = request.options
  const gpus = devices.gpus.length
  const nodes = workload.nodes
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
    nodes,
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
  const relaxed = traceSearch({
    reader,
    mode,
    workload,
    budget,
    ladder: input.ladder,
    budgetBytes,
    targetEffectiveBatch: input.targetEffectiveBatch,
    shape: { ...shape, effectiveBatch, strategy },
    methodOrder: METHOD_ORDER[mode],
    precision: compute.precision,
  })
  if (relaxed) input.advice.warnings.push(relaxed)
  const runtime = runtimeSettings({
    reader,
    mode,
    profile,
    devices,
    ranksPerNode: Math.max(1, shape.gpus),
    compile: compute.compile,
    quantCompile: compileWithQuant(best.quant, options.stackVersions ?? null),
  })

  const speed = calibratedSpeed({
    options,
    reader,
    best,
    devices,
    profile,
    shape,
    threads: runtime.threads,
  })
  const tps = speed.tokensPerSecond
  const tokensPerStep = effectiveBatch * best.seq
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
  const learningRate = learningRateFor(best, workload, tokens.budget)
  reader.settle('learningRate', learningRate, learningRateReason(best, workload, tokens.budget))
  const optimization = optimizationFor(workload.kind, best.method, tokens.steps ?? 0)
  reader.settle('optimization', optimization.value, optimization.reason)
  const fewSteps = fewStepsWarning(workload, effectiveBatch, best.seq, tokens.steps ?? 0)
  if (fewSteps) input.advice.warnings.push(fewSteps)
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
    cpuOnly,
    hours: totalHours,
    psuWatts: options.psuWatts ?? null,
    unifiedMemory: devices.gpus.some((gpu) => gpu.unifiedMemory),
  })
  const biggestDisk = [...profile.storage].sort((a, b) => b.freeBytes - a.freeBytes)[0]
  const checkpoints = planCheckpoints({
    totalHours,
    checkpointBytes: checkpointSize(best),
    kept: budget.checkpointsKept,
    datasetCacheBytes: workload.datasetBytes ?? tokens.budget * tokenIdBytes(best.model.vocab),
    diskFreeBytes: biggestDisk?.freeBytes ?? null,
  })

  const settings: Settings = {
    ...shape,
    microBatch: best.microBatch,
    gradAccum: best.gradAccum,
    effectiveBatch,
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
    strategy,
    threads: runtime.threads,
    dataloader: runtime.dataloader,
    learningRate,
    optimization: optimization.value,
  }
  const throughput = speed.throughput
  const { warnings, suggestions } = planAdvice({
    mode,
    profile,
    workload,
    devices,
    best,
    budget,
    tokens,
    tokensPerStep,
    maxHours,
    powerFraction,
    totalHours,
    power,
    checkpoints,
    effectiveBatch,
    targetEffectiveBatch:
      workload.targetEffectiveBatch ?? (options.baseBatch ? input.targetEffectiveBatch : null),
    decisions: request.decisions,
    generator: input.advice,
  })

  return {
    schemaVersion: 1,
    rigfitVersion: RIGFIT_VERSION,
    createdAt: options.createdAt,
    mode,
    stack: formatStackRef(options.stack ?? DEFAULT_STACK),
    hardware: {
      summary: describeDevices(devices) + (nodes > 1 ? ` x ${nodes} nodes` : ''),
      gpuName: cpuOnly ? null : devices.name,
      gpus,
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
    settings,
    memory: {
      perDevice: best.result.perDevice,
      hostBytes: best.result.host.total,
      capacityBytes: devices.capacityBytes,
      budgetFraction: input.memoryFraction,
      usedFraction: devices.capacityBytes > 0 ? best.deviceBytes / devices.capacityBytes : 0,
    },
    // The estimate's own figures for the job, so `rigfit estimate` with these settings gives the same.
    throughput: {
      tokensPerSecond: tps,
      tokensPerSecondPerDevice: throughput?.tokensPerSecondPerDevice ?? 0,
      stepSeconds: throughput?.stepSeconds ?? 0,
      mfu: throughput?.mfu ?? 0,
    },
    ...(speed.calibration ? { calibration: speed.calibration } : {}),
    tokens: {
      budget: tokens.budget,
      tokensPerParam: tokens.tokensPerParam,
      chinchillaTokens: tokens.chinchillaTokens,
      timeBudgetTokens: tokens.timeBudgetTokens,
      binding: tokens.binding,
    },
    time: { totalHours, steps: tokens.steps ?? 0 },
    power,
    checkpoints,
    placement: placement?.devices ?? null,
    warnings,
    suggestions,
    trace: reader.trace,
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
