import type { Mode } from '../schemas/common.js'
import type { AdviceDecision, Decisions } from '../schemas/decisions.js'
import type { HardwareProfile } from '../schemas/hardware-profile.js'
import type { Advice } from '../schemas/training-plan.js'
import type { Workload } from '../schemas/workload.js'
import { datasetTokens } from './candidates.js'
import type { CheckpointPlan } from './checkpoints.js'
import { fmtHoursText, fmtTokens } from './describe.js'
import type { ModeBudget } from './modes.js'
import type { PowerEstimate } from './power.js'
import type { Candidate } from './search.js'
import { MAX_PRETRAIN_EPOCHS, type TokenBudget } from './token-budget.js'
import type { TrainingDevices } from './training-devices.js'

export interface AdviceInput {
  mode: Mode
  profile: HardwareProfile
  workload: Workload
  devices: TrainingDevices
  best: Candidate
  budget: ModeBudget
  tokens: TokenBudget
  /** Tokens one optimizer step trains. */
  tokensPerStep: number
  /** The run's bound in hours; null when it trains what was asked for however long that takes. */
  maxHours: number | null
  /** The share of TDP the plan holds the devices to. */
  powerFraction: number
  totalHours: number
  power: PowerEstimate
  checkpoints: CheckpointPlan
  effectiveBatch: number
  /** The effective batch the user asked for; null when the mode chose it. */
  targetEffectiveBatch: number | null
  decisions: Decisions
  generator: { warnings: Advice[]; suggestions: Advice[] }
}

const fromRule = (advice: AdviceDecision): Advice => ({
  id: advice.id,
  message: advice.message,
  source: `${advice.provenance.pack}/${advice.provenance.rule}`,
  expectedGain: advice.expectedGain,
})

const generated = (id: string, message: string, expectedGain: string | null = null): Advice => ({
  id,
  message,
  source: 'generator',
  expectedGain,
})

/** The plan's warnings and suggestions: the rule packs' own, then what the generator saw while planning. */
export function planAdvice(input: AdviceInput): { warnings: Advice[]; suggestions: Advice[] } {
  const figures = assumedFiguresAdvice(input)
  const warnings = [
    ...input.decisions.warnings.map(fromRule),
    ...input.generator.warnings,
    ...runLengthWarnings(input),
    ...networkWarnings(input),
    ...tokenWarnings(input),
    ...machineWarnings(input),
    ...figures.warnings,
  ]
  const suggestions = [
    ...input.decisions.suggestions.map(fromRule),
    ...input.generator.suggestions,
    ...planningSuggestions(input),
    ...figures.suggestions,
    ...hardwareSuggestions(input),
  ]
  return { warnings: dedupe(warnings), suggestions: dedupe(suggestions) }
}

/** A model below the mode's range, a run the time budget cuts short, or one longer than the mode's runs. */
function runLengthWarnings(input: AdviceInput): Advice[] {
  const out: Advice[] = []
  const { best, budget, tokens, mode } = input
  if (!best.inRange) {
    const [low, high] = budget.paramRange
    out.push(
      generated(
        'below-mode-range',
        `This hardware cannot fit a ${mode} model of ${Math.round(low / 1e6)}M-${Math.round(high / 1e6)}M parameters; the plan trains the largest that fits (${Math.round(best.result.params.total / 1e6)}M).`,
      ),
    )
  }
  if (tokens.binding === 'time-budget' && input.workload.kind === 'pretrain') {
    const ratio = tokens.tokensPerParam.toFixed(1)
    out.push(
      generated(
        'time-budget-binds',
        `Chinchilla asks ${fmtTokens(tokens.chinchillaTokens)} tokens (${budget.tokensPerParam}x parameters); the ${input.maxHours} h budget allows ${fmtTokens(tokens.budget)} (${ratio} tokens/param), so the model will be under-trained.`,
      ),
    )
  }
  const longest = budget.hoursRange[1]
  if (input.maxHours === null && input.totalHours > longest) {
    out.push(
      generated(
        'longer-than-mode',
        `Training all ${fmtTokens(tokens.budget)} tokens asked for takes ${input.totalHours.toFixed(1)} h, longer than the ${mode} mode's ${longest} h runs; --time-budget bounds it.`,
      ),
    )
  }
  return out
}

/** Nodes linked by a network that is unknown (RDMA assumed) or Ethernet. */
function networkWarnings(input: AdviceInput): Advice[] {
  const out: Advice[] = []
  const nodes = input.workload.nodes
  const network = input.profile.interconnect.network ?? 'unknown'
  if (nodes > 1 && network === 'unknown') {
    out.push(
      generated(
        'assumed-network',
        `The network between the ${nodes} nodes is not known: the plan assumes RDMA networking (InfiniBand or EFA) and 90% scaling between nodes. Pass --interconnect infiniband, or --instance, to state it.`,
      ),
    )
  }
  if (nodes > 1 && network === 'ethernet') {
    out.push(
      generated(
        'ethernet-between-nodes',
        `The ${nodes} nodes are linked by Ethernet: NCCL runs over TCP sockets, so gradients between nodes move slower than the plan's 90% scaling (which assumes RDMA) allows. InfiniBand or EFA instances scale better.`,
      ),
    )
  }
  return out
}

/** A dataset read more than once, one step over the token bound, an effective batch off its target. */
function tokenWarnings(input: AdviceInput): Advice[] {
  const out: Advice[] = []
  const { best, tokens } = input
  if (input.workload.kind === 'pretrain' && tokens.epochs !== null && tokens.epochs > 1.05) {
    const capped = tokens.binding === 'dataset'
    out.push(
      generated(
        'dataset-repeated',
        `The dataset holds ${fmtTokens(tokens.budget / tokens.epochs)} tokens: the plan reads it ${tokens.epochs.toFixed(1)} times${capped ? `, capped at ${MAX_PRETRAIN_EPOCHS} epochs (repeated data stops paying beyond about four; Chinchilla asks ${fmtTokens(tokens.chinchillaTokens)})` : ` to reach ${fmtTokens(tokens.budget)} tokens`}. More data trains a better model.`,
      ),
    )
  }
  if (tokens.oneStepOverBound) {
    const bound =
      tokens.binding === 'time-budget'
        ? `the ${input.maxHours} h budget allows`
        : tokens.binding === 'dataset'
          ? 'the dataset holds'
          : 'Chinchilla asks'
    out.push(
      generated(
        'one-step-over-budget',
        `One optimizer step trains ${fmtTokens(input.tokensPerStep)} tokens (${input.effectiveBatch} sequences of ${best.seq}), more than ${bound}: the plan trains that one step. A smaller --target-batch gives more steps.`,
      ),
    )
  }
  if (input.targetEffectiveBatch !== null && input.effectiveBatch !== input.targetEffectiveBatch) {
    out.push(
      generated(
        'effective-batch-differs',
        `Effective batch is ${input.effectiveBatch} sequences, not the target ${input.targetEffectiveBatch}: it is not a multiple of micro-batch x GPUs x nodes.`,
      ),
    )
  }
  return out
}

/** A disk too small for the checkpoints, a power supply without headroom, an extreme plan's thermals. */
function machineWarnings(input: AdviceInput): Advice[] {
  const out: Advice[] = []
  const { devices, mode } = input
  if (input.checkpoints.fitsOnDisk === false) {
    out.push(
      generated(
        'disk-too-small',
        `Checkpoints (${input.checkpoints.kept} x ${gb(input.checkpoints.sizeBytes)} GB) and the dataset cache need ${gb(input.checkpoints.diskNeededBytes)} GB, more than the ${gb(input.checkpoints.diskFreeBytes ?? 0)} GB free.`,
      ),
    )
  }
  if (input.power.psuHeadroomWatts !== null && input.power.psuHeadroomWatts < 100) {
    out.push(
      generated(
        'psu-headroom',
        `Power supply headroom at full load is ${input.power.psuHeadroomWatts} W: transient GPU spikes can trip the PSU. Lower the power limit (nvidia-smi -pl) or use a bigger PSU.`,
      ),
    )
  }
  if (mode === 'extreme' && devices.kind !== 'cpu') {
    out.push(
      generated(
        'extreme-thermals',
        `This plan holds the GPUs at ${Math.round(input.powerFraction * 100)}% of TDP for ${input.totalHours.toFixed(1)} h with ${Math.round((1 - input.best.deviceBytes / devices.capacityBytes) * 100)}% of memory spare: run it under \`rigfit monitor --max-temp 85\` to pause before throttling and recover from an OOM.`,
      ),
    )
  }
  return out
}

/** Device figures the catalog did not give: a suggestion to measure on a CPU, a warning on a GPU. */
function assumedFiguresAdvice(input: AdviceInput): { warnings: Advice[]; suggestions: Advice[] } {
  const warnings: Advice[] = []
  const suggestions: Advice[] = []
  const { devices } = input
  if (devices.kind === 'cpu' && devices.assumedFigures.length > 0) {
    suggestions.push(
      generated(
        'measure-memory-bandwidth',
        'Memory bandwidth was not measured, so speed assumes 20 GB/s: `rigfit analyze --benchmark` measures it.',
        'a more accurate time estimate',
      ),
    )
  } else if (devices.assumedFigures.length > 0) {
    const entry = devices.gpus[0]?.catalog
    warnings.push(
      entry
        ? generated(
            'catalog-figures-missing',
            `${devices.name} is in the GPU catalog (${entry.id}), but its entry gives no ${devices.assumedFigures.join(', ')}: a default was assumed, so the figures that depend on it are rough.`,
          )
        : generated(
            'gpu-not-in-catalog',
            `${devices.name} is not in any GPU catalog: ${devices.assumedFigures.join(', ')} assumed. Install the vendor plugin or pass --gpu with a catalog name.`,
          ),
    )
  }
  return { warnings, suggestions }
}

/** What to give or run while planning: the dataset's size, the monitor for a balanced plan. */
function planningSuggestions(input: AdviceInput): Advice[] {
  const out: Advice[] = []
  const { devices, mode } = input
  if (input.workload.kind === 'finetune' && datasetTokens(input.workload) === null) {
    out.push(
      generated(
        'give-dataset-size',
        `Without the dataset's size the token budget is what ${input.maxHours === null ? 'the planned training time' : `${fmtHoursText(input.maxHours)} of training`} reaches; give the file with --dataset train.jsonl (its tokens are counted), or --examples N --tokens-per-example N, --dataset-tokens N or --dataset-size, to plan one epoch of it (--epochs for more).`,
        'a token budget that matches the data',
      ),
    )
  }
  if (mode === 'balanced' && devices.kind !== 'cpu') {
    out.push(
      generated('watch-thermals', 'Run under `rigfit monitor` for temperature and power alerts.', null),
    )
  }
  return out
}

/** Hardware that would train faster: more memory, tensor cores, more NVLink GPUs, NVMe. */
function hardwareSuggestions(input: AdviceInput): Advice[] {
  const out: Advice[] = []
  const { best, devices } = input
  if (best.gradCheckpointing) {
    out.push(
      generated(
        'more-memory-no-recompute',
        'Gradient checkpointing is on to fit memory; a GPU with more memory (or more GPUs) would drop it.',
        '+25-33% tokens/s',
      ),
    )
  }
  if (best.precision === 'fp32' && devices.kind !== 'cpu') {
    out.push(
      generated(
        'mixed-precision',
        'This GPU trains in fp32; a GPU with tensor cores trains in mixed precision.',
        '+40-100% tokens/s',
      ),
    )
  }
  const fastLink = ['nvlink', 'xgmi'].includes(input.profile.interconnect.kind)
  if (best.offload !== 'none' && best.gpus > 1 && fastLink) {
    out.push(
      generated(
        'nvlink-sharding',
        `Sharded over ${best.gpus * best.nodes} GPUs the training state still does not fit, so ${best.offload === 'all' ? 'parameters and optimizer states' : 'optimizer states'} go to host RAM over PCIe; more NVLink-connected GPUs (or nodes) would shard it further and keep it on the GPUs.`,
        'no CPU offload',
      ),
    )
  }
  const disks = input.profile.storage
  if (disks.length > 0 && disks.every((disk) => disk.kind === 'hdd')) {
    out.push(
      generated(
        'nvme-for-streaming',
        'Only spinning disks: NVMe is recommended for dataset streaming and checkpoints.',
        'faster data loading',
      ),
    )
  }
  return out
}

const gb = (bytes: number) => (bytes / 1e9).toFixed(1)

/** Each id once, the first (a rule's own message before the generator's) kept. */
function dedupe(list: Advice[]): Advice[] {
  const kept = new Map<string, Advice>()
  for (const item of list) if (!kept.has(item.id)) kept.set(item.id, item)
  return [...kept.values()]
}
