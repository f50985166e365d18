import { RigfitError } from '../errors.js'
import { countParams, generateModelShape } from '../model/index.js'
import type { Attention, Mode, Offload, Optimizer, Precision, Sharding } from '../schemas/common.js'
import type { Decisions } from '../schemas/decisions.js'
import type { LoraSpec } from '../schemas/estimate.js'
import type { HardwareProfile } from '../schemas/hardware-profile.js'
import type { ModelSpec } from '../schemas/model-spec.js'
import type { Advice, Settings, TrainingPlan } from '../schemas/training-plan.js'
import type { Workload } from '../schemas/workload.js'
import { RIGFIT_VERSION } from '../version.js'
import { planAdvice } from './advice.js'
import { planCheckpoints } from './checkpoints.js'
import { planDataloader } from './dataloader.js'
import { DecisionReader } from './decided.js'
import { MODE_BUDGETS, type ModeBudget } from './modes.js'
import { placeModels } from './placement.js'
import { estimatePower } from './power.js'
import { scalingEfficiency } from './scaling.js'
import { type Candidate, compareCandidates, type SearchSpace, searchCandidates } from './search.js'
import { tokenBudget } from './token-budget.js'
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
  createdAt?: string
}

export interface PlanRequest {
  profile: HardwareProfile
  workload: Workload
  mode: Mode
  decisions: Decisions
  options?: PlanOptions
}

/** Tokens per step the modes aim for when no target batch is given (GPT-2 trained at ~0.5 M tokens per step). */
const DEFAULT_TOKENS_PER_STEP: Record<Mode, number> = {
  conservative: 65_536,
  balanced: 262_144,
  extreme: 524_288,
}
/** LoRA settings by mode: more rank and more wrapped layers as the mode spends more memory. */
const LORA_BY_MODE: Record<Mode, LoraSpec> = {
  conservative: { rank: 8, targets: ['q', 'v'], dropout: 0 },
  balanced: { rank: 16, targets: ['q', 'k', 'v', 'o'], dropout: 0 },
  extreme: { rank: 64, targets: ['q', 'k', 'v', 'o', 'gate', 'up', 'down'], dropout: 0 },
}
/** Fine-tuning method preference by mode: conservative adapts a little, the others train fully when it fits. */
const METHOD_ORDER: Record<Mode, Candidate['method'][]> = {
  conservative: ['lora', 'qlora', 'full'],
  balanced: ['full', 'lora', 'qlora'],
  extreme: ['full', 'lora', 'qlora'],
}
/** Host RAM a run may plan on for offloaded states, as a share of usable RAM. */
const HOST_OFFLOAD_SHARE = 0.8
/** Average bytes of raw text per token for BPE tokenizers on English text. */
const BYTES_PER_TOKEN = 4
/** Stored token ids (uint16 for vocabularies up to 65 536, else uint32). */
const tokenIdBytes = (vocab: number) => (vocab <= 65_536 ? 2 : 4)

/** Builds the best plan for one mode within its budget. Deterministic: same inputs, same plan. */
export function generatePlan(request: PlanRequest): TrainingPlan {
  const { profile, workload, mode } = request
  const options = request.options ?? {}
  const reader = new DecisionReader(request.decisions)
  const advice: { warnings: Advice[]; suggestions: Advice[] } = { warnings: [], suggestions: [] }
  const budget = effectiveBudget(MODE_BUDGETS[mode], profile, advice)

  const devices = selectTrainingDevices(profile, reader.cap('gpus') ?? options.maxGpus ?? null)
  const gpus = devices.gpus.length
  const nodes = workload.nodes
  const cpuOnly = devices.kind === 'cpu'

  const memoryFraction = Math.min(
    options.targetUtilization ?? reader.value<number>('memoryFraction') ?? budget.memoryFraction,
    reader.cap('memoryFraction') ?? 1,
  )
  reader.recordGenerator(
    'memoryFraction',
    memoryFraction,
    `${mode} mode uses at most ${Math.round(memoryFraction * 100)}% of usable device memory`,
    {
      capacityBytes: devices.capacityBytes,
    },
  )
  const budgetBytes = Math.floor(devices.capacityBytes * memoryFraction)

  const precision = choosePrecision(reader, devices)
  const attention = reader.resolve<Attention>(
    'attention',
    devices.kind === 'cuda' && Number(devices.computeCapability ?? 0) >= 8 && precision !== 'fp32'
      ? 'flash'
      : 'sdpa',
    'FlashAttention needs an Ampere or newer NVIDIA GPU and 16-bit activations; elsewhere PyTorch SDPA',
    { computeCapability: devices.computeCapability, precision },
  )
  const optimizer = reader.resolve<Optimizer>(
    'optimizer',
    'adamw',
    'AdamW is the standard optimizer for transformer training',
  )
  const fusedOptimizer = reader.resolve<boolean>(
    'fusedOptimizer',
    devices.kind === 'cuda',
    'fused AdamW kernels exist on CUDA',
  )
  const tf32 = reader.resolve<boolean>(
    'tf32',
    devices.estimateDevice.tf32,
    'TF32 matmuls where the GPU supports them',
  )

  const frozen = workload.frozenModels.map((spec) => ({ spec, params: countParams(spec).total }))
  // Frozen companion models are placed first. When they do not all fit beside the trained model on every GPU,
  // each goes to a GPU of its own and the trained model trains on GPU 0 alone, without data parallelism.
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
  const dataParallelGpus = probe?.strategy === 'model-split' ? 1 : gpus
  const targetFor = targetEffectiveBatch(workload, options, mode, dataParallelGpus, nodes)

  const searchedChoices = (preferRules: boolean) => ({
    methods: methodCandidates(workload, mode, reader, cpuOnly, preferRules),
    gradCheckpointing: booleanChoices(reader, 'gradCheckpointing', preferRules),
    shardings: shardingChoices(reader, dataParallelGpus, nodes, preferRules),
    offloads: offloadChoices(reader, mode, cpuOnly, preferRules),
  })
  const seqCap = reader.cap('seq') ?? Number.POSITIVE_INFINITY
  const mbCap = reader.cap('microBatch') ?? Number.POSITIVE_INFINITY
  const space: Omit<SearchSpace, 'seqs' | 'targetEffectiveBatch' | 'frozenBytes'> = {
    models: modelCandidates(workload, budget),
    // Search dimensions start at the rule packs' preferences (relaxed below if nothing fits with them).
    ...searchedChoices(true),
    microBatches: microBatchSteps(Math.min(budget.microBatchRange[1], mbCap)).filter((mb) =>
      options.baseBatch ? mb <= options.baseBatch : true,
    ),
    precision,
    attention,
    optimizer,
    fusedOptimizer,
    tf32,
    gpus: dataParallelGpus,
    nodes,
    budgetBytes,
    hostBudgetBytes: profile.memory.usableBytes * HOST_OFFLOAD_SHARE,
    tokenTarget: (params) =>
      workload.kind === 'pretrain'
        ? params * budget.tokensPerParam
        : (datasetTokens(workload) ?? Number.POSITIVE_INFINITY),
    maxHours: workload.timeBudgetHours ?? budget.hoursRange[1],
    efficiency: (sharding) => scalingEfficiency(dataParallelGpus, nodes, sharding, profile.interconnect.kind),
    fillMemory: mode === 'extreme',
    exactTarget: workload.targetEffectiveBatch !== null || Boolean(options.baseBatch),
    microBatchRange: budget.microBatchRange,
  }

  const seqs = sequenceCandidates(workload, budget, seqCap)
  const fullSpace: SearchSpace = {
    ...space,
    seqs,
    targetEffectiveBatch: targetFor,
    frozenBytes: probe?.frozenBytesOnTrainingGpu ?? 0,
  }
  // Shorter sequences first, then the rule packs' preferred checkpointing / sharding / offload / method
  // relaxed (forbidden values stay out): a plan that fits beats an error.
  // A sequence length the user asked for is kept; the mode's own range may shrink.
  const shorter = workload.seq
    ? []
    : powersOfTwo(128, Math.min(seqs[seqs.length - 1] ?? 512, seqCap) / 2).reverse()
  const ladder: SearchSpace[] = [
    fullSpace,
    { ...fullSpace, seqs: shorter },
    { ...fullSpace, ...searchedChoices(false) },
    { ...fullSpace, ...searchedChoices(false), seqs: shorter },
  ]
  let fitting: Candidate[] = []
  let evaluated = 0
  for (const [step, candidateSpace] of ladder.entries()) {
    if (candidateSpace.seqs.length === 0) continue
    const result = searchCandidates(candidateSpace, devices)
    evaluated += result.evaluated
    fitting = result.fitting
    if (fitting.length === 0) continue
    if (step >= 2) {
      advice.warnings.push({
        id: 'rule-preference-relaxed',
        message:
          "Nothing fits with the rule packs' preferred checkpointing, sharding, offload or method; the plan departs from them to fit (`rigfit explain gradCheckpointing` shows which).",
        source: 'generator',
        expectedGain: null,
      })
    }
    break
  }
  if (fitting.length === 0) {
    throw new RigfitError(
      'fit',
      'E_NO_PLAN_FITS',
      `No ${mode} configuration fits ${describeDevices(devices)} (${gib(budgetBytes)} GiB budget).`,
      {
        suggestion:
          workload.kind === 'finetune'
            ? 'Try QLoRA (--method qlora), a smaller model, more GPUs (--gpus), or a larger GPU (--gpu).'
            : 'Try a machine with more memory, or plan for another GPU with --gpu.',
      },
    )
  }
  const anyTimeFeasible = fitting.some((candidate) => candidate.timeFeasible && candidate.inRange)
  fitting.sort(compareCandidates(fullSpace, anyTimeFeasible))
  const best = fitting[0] as Candidate

  return assemblePlan({
    request,
    reader,
    advice,
    budget,
    devices,
    best,
    evaluated,
    fitting: fitting.length,
    memoryFraction,
    frozen,
    targetFor,
    dataParallelGpus,
  })
}

interface AssembleInput {
  request: PlanRequest
  reader: DecisionReader
  advice: { warnings: Advice[]; suggestions: Advice[] }
  budget: ModeBudget
  devices: TrainingDevices
  best: Candidate
  evaluated: number
  fitting: number
  memoryFraction: number
  frozen: { spec: ModelSpec; params: number }[]
  targetFor: number
  /** GPUs that hold a replica of the trained model: all of them, or 1 when models are split across GPUs. */
  dataParallelGpus: number
}

function assemblePlan(input: AssembleInput): TrainingPlan {
  const { request, reader, advice, budget, devices, best } = input
  const { profile, workload, mode } = request
  const options = request.options ?? {}
  const gpus = devices.gpus.length
  const dpGpus = input.dataParallelGpus
  const nodes = workload.nodes
  const cpuOnly = devices.kind === 'cpu'
  const params = best.result.params
  const searchFacts = {
    candidatesEvaluated: input.evaluated,
    candidatesFitting: input.fitting,
    budgetBytes: Math.floor(devices.capacityBytes * input.memoryFraction),
    predictedBytes: best.deviceBytes,
  }
  reader.recordGenerator('model', best.model.id, modelReason(workload, best, budget), {
    ...searchFacts,
    params: params.total,
  })
  reader.recordGenerator('seq', best.seq, `the longest sequence in the ${mode} range that fits`, searchFacts)
  reader.recordGenerator(
    'microBatch',
    best.microBatch,
    mode === 'extreme'
      ? 'the largest micro-batch that fits'
      : `the fastest micro-batch in the ${mode} range that fits`,
    searchFacts,
  )
  reader.recordGenerator(
    'gradAccum',
    best.gradAccum,
    `reaches the target effective batch of ${input.targetFor} sequences`,
    {
      microBatch: best.microBatch,
      gpus: dpGpus,
      nodes,
    },
  )
  recordSearched(
    reader,
    request.decisions,
    'gradCheckpointing',
    best.gradCheckpointing,
    best.gradCheckpointing ? 'needed to fit the budget' : 'not needed: activations fit',
    searchFacts,
  )
  recordSearched(
    reader,
    request.decisions,
    'sharding',
    best.sharding,
    best.sharding === 'none'
      ? 'each GPU holds the full training state'
      : 'the training state does not fit one GPU unsharded',
    searchFacts,
  )
  recordSearched(
    reader,
    request.decisions,
    'offload',
    best.offload,
    best.offload === 'none'
      ? 'everything stays on the device'
      : 'offloading states to host RAM is what makes it fit',
    searchFacts,
  )
  recordSearched(
    reader,
    request.decisions,
    'method',
    best.method,
    `the first of ${METHOD_ORDER[mode].join(', ')} that fits the ${mode} budget`,
    searchFacts,
  )

  const compile = reader.resolve<boolean>(
    'compile',
    !cpuOnly && devices.kind !== 'mps',
    'torch.compile helps on CUDA and ROCm; not on CPU or MPS',
  )
  const compileMode = reader.resolve<Settings['compile']['mode']>(
    'compileMode',
    mode === 'extreme' ? 'max-autotune' : 'default',
    'max-autotune searches kernels longer for the last few percent',
  )
  const cudnnBenchmark = reader.resolve<boolean>(
    'cudnnBenchmark',
    !cpuOnly && devices.kind !== 'mps',
    'fixed shapes: let cuDNN pick the fastest kernels',
  )
  const backend = reader.resolve<Settings['backend']>(
    'backend',
    defaultBackend(devices),
    'the collective backend of the device vendor',
  )
  const threads = reader.resolve<number>(
    'threads',
    Math.max(1, profile.cpu.physicalCores),
    'one intra-op thread per physical core',
  )
  const loaderDefaults = planDataloader({
    deviceMemoryBytes: devices.capacityBytes,
    usableCores: profile.cpu.usableCores,
    gpusPerNode: Math.max(1, gpus),
    cpuOnly,
    pinMemoryAllowed: !cpuOnly && devices.kind !== 'mps',
  })
  const workers = Math.min(
    reader.resolve<number>(
      'dataloaderWorkers',
      loaderDefaults.workers,
      'about one worker per 3 GB of device memory, capped by the cores',
      {
        capacityBytes: devices.capacityBytes,
        usableCores: profile.cpu.usableCores,
      },
    ),
    reader.cap('dataloaderWorkers') ?? Number.POSITIVE_INFINITY,
  )
  const pinMemory = reader.resolve<boolean>(
    'pinMemory',
    loaderDefaults.pinMemory,
    'page-locked host buffers speed up host-to-GPU copies',
  )
  const prefetch = reader.resolve<number>(
    'prefetchFactor',
    loaderDefaults.prefetchFactor ?? 2,
    'two batches in flight per worker',
  )
  const persistentWorkers = reader.resolve<boolean>(
    'persistentWorkers',
    workers > 0,
    'keep workers alive between epochs',
  )

  const efficiency = scalingEfficiency(dpGpus, nodes, best.sharding, profile.interconnect.kind)
  const tps = best.tokensPerSecond
  const datasetTok = datasetTokens(workload)
  const tokens = tokenBudget({
    params: params.total,
    tokensPerParam: budget.tokensPerParam,
    tokensPerSecond: tps,
    maxHours: workload.timeBudgetHours ?? budget.hoursRange[1],
    datasetTokens:
      workload.kind === 'finetune'
        ? (datasetTok ?? Math.floor(tps * (workload.timeBudgetHours ?? budget.hoursRange[1]) * 3600))
        : null,
  })
  const effectiveBatch = best.microBatch * best.gradAccum * Math.max(1, dpGpus) * nodes
  const tokensPerStep = effectiveBatch * best.seq
  const totalHours = tps > 0 ? tokens.budget / tps / 3600 : 0
  const power = estimatePower({
    deviceTdpWatts: devices.tdpWatts,
    devicePowerLimitWatts: devices.powerLimitWatts,
    tdpFraction: Math.min(
      budget.tdpFraction,
      reader.value<number>('powerFraction') ?? 1,
      reader.cap('powerFraction') ?? 1,
    ),
    physicalCores: profile.cpu.physicalCores,
    cpuOnly,
    hours: totalHours,
    psuWatts: options.psuWatts ?? null,
  })
  const checkpointBytes = checkpointSize(best)
  const dataCacheBytes = workload.datasetBytes ?? tokens.budget * tokenIdBytes(best.model.vocab)
  const biggestDisk = [...profile.storage].sort((a, b) => b.freeBytes - a.freeBytes)[0]
  const checkpoints = planCheckpoints({
    totalHours,
    checkpointBytes,
    kept: budget.checkpointsKept,
    datasetCacheBytes: dataCacheBytes,
    diskFreeBytes: biggestDisk?.freeBytes ?? null,
  })
  const placement =
    input.frozen.length > 0
      ? placeModels({
          trainedId: best.model.id,
          trainedBytes: best.result.perDevice.total,
          frozen: input.frozen,
          gpus: Math.max(1, gpus),
          capacityBytes: Math.floor(devices.capacityBytes * input.memoryFraction),
        })
      : null
  const strategy: Settings['strategy'] = cpuOnly
    ? 'cpu'
    : placement?.strategy === 'model-split'
      ? 'model-split'
      : gpus <= 1 && nodes <= 1
        ? 'single'
        : best.sharding === 'none'
          ? 'ddp'
          : best.sharding === 'fsdp'
            ? 'fsdp'
            : 'zero'

  const settings: Settings = {
    device: devices.kind,
    // GPUs in data parallel: with models split across GPUs, the trained model's one.
    gpus: cpuOnly ? 0 : dpGpus,
    nodes,
    microBatch: best.microBatch,
    gradAccum: best.gradAccum,
    effectiveBatch,
    seq: best.seq,
    precision: best.precision,
    optimizer: best.optimizer,
    fusedOptimizer: reader.value<boolean>('fusedOptimizer') ?? devices.kind === 'cuda',
    gradCheckpointing: best.gradCheckpointing,
    attention: best.attention,
    sharding: best.sharding,
    offload: best.offload,
    method: best.method,
    lora: best.lora ? { rank: best.lora.rank, targets: [...best.lora.targets] } : null,
    quant: best.quant,
    compile: { enabled: compile, mode: compileMode },
    tf32: reader.value<boolean>('tf32') ?? devices.estimateDevice.tf32,
    cudnnBenchmark,
    backend,
    strategy,
    threads,
    dataloader: {
      workers,
      pinMemory,
      prefetchFactor: workers > 0 ? prefetch : null,
      persistentWorkers: persistentWorkers && workers > 0,
    },
    learningRate: learningRate(best, workload),
  }

  const throughput = {
    tokensPerSecond: tps,
    tokensPerSecondPerDevice: tps / Math.max(1, dpGpus) / nodes,
    stepSeconds: tps > 0 ? tokensPerStep / tps : 0,
    mfu: (best.result.throughput?.mfu ?? 0) * efficiency,
  }
  const usedFraction = devices.capacityBytes > 0 ? best.deviceBytes / devices.capacityBytes : 0
  const { warnings, suggestions } = planAdvice({
    mode,
    profile,
    workload,
    devices,
    best,
    budget,
    tokens,
    totalHours,
    power,
    checkpoints,
    effectiveBatch,
    targetEffectiveBatch:
      request.workload.targetEffectiveBatch ?? (options.baseBatch ? input.targetFor : null),
    decisions: request.decisions,
    generator: advice,
  })

  return {
    schemaVersion: 1,
    rigfitVersion: RIGFIT_VERSION,
    createdAt: options.createdAt ?? new Date().toISOString(),
    mode,
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
    workload: { kind: workload.kind, description: describeWorkload(workload, best) },
    // A model trained from scratch is built for the sequence length it trains at.
    model: best.model.source === 'generated' ? { ...best.model, maxPositions: best.seq } : best.model,
    params: { total: params.total, trainable: params.trainable },
    settings,
    memory: {
      perDevice: best.result.perDevice,
      hostBytes: best.result.host.total,
      capacityBytes: devices.capacityBytes,
      budgetFraction: input.memoryFraction,
      usedFraction,
    },
    throughput,
    tokens,
    time: { totalHours, steps: tokensPerStep > 0 ? Math.ceil(tokens.budget / tokensPerStep) : 0 },
    power,
    checkpoints,
    placement: placement?.devices ?? null,
    warnings,
    suggestions,
    trace: reader.trace,
  }
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

function choosePrecision(reader: DecisionReader, devices: TrainingDevices): Precision {
  const device = devices.estimateDevice
  const fallback: Precision =
    devices.kind === 'cpu'
      ? device.bf16
        ? 'bf16-mixed'
        : 'fp32'
      : device.bf16
        ? 'bf16-mixed'
        : device.fp16TensorTflops !== null || devices.kind === 'mps'
          ? 'fp16-mixed'
          : 'fp32'
  const allowed = reader.allowed<Precision>('precision', [fallback, 'bf16-mixed', 'fp16-mixed', 'fp32'])
  return reader.resolve<Precision>(
    'precision',
    allowed[0] ?? 'fp32',
    'bf16 where the device has it, fp16 with loss scaling on tensor cores, fp32 otherwise',
    {
      bf16: device.bf16,
      fp16TensorTflops: device.fp16TensorTflops,
    },
  )
}

function modelCandidates(workload: Workload, budget: ModeBudget): SearchSpace['models'] {
  if (workload.kind === 'finetune') {
    if (!workload.model)
      throw new RigfitError('input', 'E_NO_MODEL', 'Fine-tuning needs a model.', {
        suggestion: 'Pass --model <catalog id | config.json>.',
      })
    return [{ spec: workload.model, inRange: true }]
  }
  const [low, high] = budget.paramRange
  const inRange = geometric(low, high, 8).map((target) => ({
    spec: generateModelShape(target),
    inRange: true,
  }))
  // Fallbacks below the range for hardware too small for it.
  const below = geometric(2e6, low, 5)
    .slice(0, -1)
    .map((target) => ({ spec: generateModelShape(target), inRange: false }))
  return [...inRange, ...below]
}

function methodCandidates(
  workload: Workload,
  mode: Mode,
  reader: DecisionReader,
  cpuOnly: boolean,
  preferRules: boolean,
): SearchSpace['methods'] {
  const build = (method: Candidate['method']) => ({
    method,
    lora: method === 'full' ? null : LORA_BY_MODE[mode],
    quant: method === 'qlora' ? ('nf4' as const) : ('none' as const),
  })
  if (workload.kind === 'pretrain') return [build('full')]
  const decided = preferRules ? reader.value<Candidate['method']>('method') : undefined
  const order = workload.method !== 'auto' ? [workload.method] : decided ? [decided] : METHOD_ORDER[mode]
  // bitsandbytes NF4 kernels need a CUDA GPU.
  return reader
    .allowed('method', order as Candidate['method'][])
    .filter((method) => !(cpuOnly && method === 'qlora'))
    .map(build)
}

function sequenceCandidates(workload: Workload, budget: ModeBudget, cap: number): number[] {
  if (workload.seq) return [workload.seq]
  const [low, high] = budget.seqRange
  // A fine-tuned model keeps its context length; a generated one takes the plan's.
  const maxPositions = workload.model?.maxPositions ?? Number.POSITIVE_INFINITY
  const seqs = powersOfTwo(low, high).filter((seq) => seq <= cap && seq <= maxPositions)
  return (seqs.length > 0 ? seqs : [Math.min(low, cap, maxPositions)]).reverse()
}

function booleanChoices(
  reader: DecisionReader,
  setting: 'gradCheckpointing',
  preferRules: boolean,
): boolean[] {
  const decided = preferRules ? reader.value<boolean>(setting) : undefined
  return decided === undefined ? reader.allowed(setting, [false, true]) : [decided]
}

function shardingChoices(
  reader: DecisionReader,
  gpus: number,
  nodes: number,
  preferRules: boolean,
): Sharding[] {
  const decided = preferRules ? reader.value<Sharding>('sharding') : undefined
  if (decided) return [decided]
  // One device: ZeRO-2/3 only carry offload there (validShardingOffload drops them without it).
  if (gpus * nodes <= 1) return reader.allowed<Sharding>('sharding', ['none', 'zero2', 'zero3'])
  return reader.allowed<Sharding>('sharding', ['none', 'zero1', 'zero2', 'fsdp'])
}

function offloadChoices(
  reader: DecisionReader,
  mode: Mode,
  cpuOnly: boolean,
  preferRules: boolean,
): Offload[] {
  const decided = preferRules ? reader.value<Offload>('offload') : undefined
  if (decided) return [decided]
  if (cpuOnly) return ['none']
  return reader.allowed<Offload>(
    'offload',
    mode === 'extreme' ? ['none', 'optimizer', 'all'] : ['none', 'optimizer'],
  )
}

function recordSearched(
  reader: DecisionReader,
  decisions: Decisions,
  setting: 'gradCheckpointing' | 'sharding' | 'offload' | 'method',
  value: unknown,
  reason: string,
  facts: Record<string, unknown>,
): void {
  const decision = decisions.settings[setting]
  if (decision && decision.value === value) reader.recordRule(setting, value, decision.provenance)
  else if (decision) {
    const rule = `${decision.provenance.pack}/${decision.provenance.rule}`
    reader.recordGenerator(
      setting,
      value,
      `${rule} prefers ${JSON.stringify(decision.value)}, but nothing fits with it: ${reason}`,
      facts,
    )
  } else reader.recordGenerator(setting, value, reason, facts)
}

function targetEffectiveBatch(
  workload: Workload,
  options: PlanOptions,
  mode: Mode,
  gpus: number,
  nodes: number,
): number {
  if (workload.targetEffectiveBatch) return workload.targetEffectiveBatch
  if (options.baseBatch) return options.baseBatch * Math.max(1, gpus) * nodes
  const seq = workload.seq ?? MODE_BUDGETS[mode].seqRange[1]
  return Math.max(1, Math.round(DEFAULT_TOKENS_PER_STEP[mode] / seq))
}

function datasetTokens(workload: Workload): number | null {
  return workload.datasetBytes === null ? null : Math.floor(workload.datasetBytes / BYTES_PER_TOKEN)
}

/** A checkpoint holds the trained weights in fp32 and the optimizer states: the full state for full training, the adapters for LoRA. */
function checkpointSize(best: Candidate): number {
  const trainable = best.result.params.trainable
  const stateBytes = { adamw: 8, 'adamw-8bit': 2, adafactor: 1, sgd: 0, 'sgd-momentum': 4 }[best.optimizer]
  return trainable * (4 + stateBytes)
}

/** Peak learning rate: smaller models take larger rates (GPT-3 paper, Table 2.1); adapters train at 2e-4. */
function learningRate(best: Candidate, workload: Workload): number {
  if (best.method !== 'full') return 2e-4
  if (workload.kind === 'finetune') return 2e-5
  const params = best.result.params.total
  return params < 100e6 ? 6e-4 : params < 400e6 ? 3e-4 : params < 2e9 ? 2e-4 : 1.5e-4
}

function modelReason(workload: Workload, best: Candidate, budget: ModeBudget): string {
  if (workload.kind === 'finetune') return `fine-tunes ${best.model.name} with ${best.method}`
  const [low, high] = budget.paramRange
  const range = `${fmtParams(low)}-${fmtParams(high)}`
  if (!best.inRange) return `nothing in the ${budget.mode} range (${range}) fits; the largest model that does`
  return best.timeFeasible
    ? `the largest model in ${range} that fits memory and trains to ${budget.tokensPerParam} tokens/param within ${budget.hoursRange[1]} h`
    : `no model in ${range} reaches ${budget.tokensPerParam} tokens/param within ${budget.hoursRange[1]} h here: the smallest, with the time budget binding`
}

function describeDevices(devices: TrainingDevices): string {
  if (devices.kind === 'cpu') return `CPU (${devices.name})`
  const count = devices.gpus.length
  return `${count > 1 ? `${count}x ` : ''}${devices.name} (${gib(devices.capacityBytes)} GiB${devices.kind === 'mps' ? ' working set' : ''})`
}

function describeWorkload(workload: Workload, best: Candidate): string {
  return workload.kind === 'pretrain'
    ? `pretrain a ${fmtParams(best.result.params.total)} ${best.model.modelType} model from scratch`
    : `fine-tune ${best.model.name} (${best.method}${best.lora ? `, rank ${best.lora.rank}` : ''})`
}

function defaultBackend(devices: TrainingDevices): Settings['backend'] {
  if (devices.kind === 'cuda') return 'nccl'
  if (devices.kind === 'rocm') return 'rccl'
  if (devices.kind === 'mps') return 'none'
  return 'gloo'
}

/**
 * Micro-batch candidates: every size up to 16, then steps of a quarter of the power of two below (20, 24, 28,
 * 32, 40, ...), so the search fills memory in fine steps without trying every integer.
 */
export function microBatchSteps(high: number): number[] {
  const out: number[] = []
  for (let value = 1; value <= Math.min(16, high); value += 1) out.push(value)
  for (let base = 16; base < high; base *= 2) {
    for (let step = 1; step <= 4; step += 1) {
      const value = base + (base / 4) * step
      if (value <= high) out.push(value)
    }
  }
  return out
}

export function powersOfTwo(low: number, high: number): number[] {
  const out: number[] = []
  for (let value = 1; value <= high; value *= 2) if (value >= low) out.push(value)
  return out
}

function geometric(low: number, high: number, count: number): number[] {
  if (count <= 1) return [low]
  const ratio = (high / low) ** (1 / (count - 1))
  return Array.from({ length: count }, (_, i) => Math.round(low * ratio ** i))
}

export const gib = (bytes: number) => (bytes / 2 ** 30).toFixed(1)

export function fmtParams(params: number): string {
  if (params >= 1e9) return `${(params / 1e9).toFixed(params >= 10e9 ? 0 : 1)}B`
  if (params >= 1e6) return `${Math.round(params / 1e6)}M`
  return `${Math.round(params / 1e3)}K`
}
