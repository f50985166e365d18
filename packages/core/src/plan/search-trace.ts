import type { Mode } from '../schemas/common.js'
import type { Advice, Settings } from '../schemas/training-plan.js'
import type { Workload } from '../schemas/workload.js'
import { exampleSequence, LORA_REASON_BY_MODE } from './candidates.js'
import type { DecisionReader } from './decided.js'
import { describeAdapters, modelReason } from './describe.js'
import type { LadderResult } from './ladder.js'
import type { ModeBudget } from './modes.js'
import { BUDGET_TOLERANCE, type Candidate } from './search.js'

const LEVER_WORDS: Record<string, string> = {
  checkpointing: 'checkpointing and sharding',
  '8-bit-optimizer': '8-bit optimizer states',
  'offload-optimizer': 'optimizer offload',
  'offload-all': 'parameter offload',
  'shorter-sequence': 'a shorter sequence',
}

export interface SearchTraceInput {
  reader: DecisionReader
  mode: Mode
  workload: Workload
  budget: ModeBudget
  ladder: LadderResult & { best: Candidate }
  budgetBytes: number
  targetEffectiveBatch: number
  /** Settings that follow from the winner: shape of the job and strategy. */
  shape: Pick<Settings, 'device' | 'gpus' | 'nodes' | 'effectiveBatch' | 'strategy'>
  methodOrder: readonly string[]
  /** The precision the settings chose before the search (a ZeRO winner trains pure half as mixed). */
  precision: Settings['precision']
}

/**
 * Traces every setting the search decided, with the step of the lever ladder that decided it and the figures
 * it weighed, and returns the warning when the plan had to depart from the rule packs' preferences.
 */
export function traceSearch(input: SearchTraceInput): Advice | null {
  const weighed = searchFacts(input)
  traceShape(input, weighed)
  traceLevers(input, weighed)
  traceDevices(input)
  return relaxedWarning(input)
}

/** The ladder step that decided, and the figures the search weighed (with the alternatives, for the levers). */
function searchFacts(input: SearchTraceInput) {
  const { ladder } = input
  const best = ladder.best
  const lever = ladder.rung?.lever ?? 'checkpointing'
  const facts = {
    candidatesEvaluated: ladder.evaluated,
    candidatesFitting: ladder.fitting,
    ladderStep: lever,
    budgetBytes: input.budgetBytes,
    predictedBytes: best.deviceBytes,
    tokensPerSecond: Math.round(best.tokensPerSecond),
  }
  // The setups weighed against each other, with their predicted speed and time: the levers' cost, computed.
  const compared = { ...facts, alternatives: ladder.alternatives }
  return { lever, facts, compared }
}
type SearchFacts = ReturnType<typeof searchFacts>

/** Model, sequence, precision and the batch: what one step trains. */
function traceShape(input: SearchTraceInput, { lever, facts }: SearchFacts): void {
  const { reader, mode, workload, shape } = input
  const best = input.ladder.best
  const world = `${shape.gpus > 1 ? `${shape.gpus} GPUs` : 'one GPU'}${shape.nodes > 1 ? ` x ${shape.nodes} nodes` : ''}`
  reader.settle('model', best.model.id, modelReason(workload, best, input.budget), {
    ...facts,
    params: best.result.params.total,
  })
  reader.settle(
    'seq',
    best.seq,
    workload.seq
      ? 'the sequence length asked for (--seq)'
      : (lever === 'shorter-sequence'
          ? `nothing fits at the ${mode} range's sequence lengths, even with offload: the longest shorter one that does`
          : `the longest sequence in the ${mode} range that fits with ${LEVER_WORDS[lever]} at most`) +
          exampleFloorWords(workload),
    facts,
  )
  // Not settle: a pinned precision is recorded as the flag's, and this departs from the pin too.
  if (best.precision !== input.precision)
    reader.recordGenerator(
      'precision',
      best.precision,
      `DeepSpeed ZeRO keeps fp32 master weights and optimizer states under ${input.precision}, so the plan is ${best.precision} and its memory counts them`,
      { asked: input.precision, sharding: best.sharding },
    )
  reader.settle(
    'microBatch',
    best.microBatch,
    mode === 'extreme'
      ? 'the largest micro-batch among the fastest setups that fit'
      : `the fastest micro-batch in the ${mode} range that fits`,
    facts,
  )
  reader.settle(
    'gradAccum',
    best.gradAccum,
    `reaches the target effective batch of ${input.targetEffectiveBatch} sequences`,
    {
      microBatch: best.microBatch,
      gpus: shape.gpus,
      nodes: shape.nodes,
    },
  )
  reader.settle(
    'effectiveBatch',
    shape.effectiveBatch,
    `micro-batch ${best.microBatch} x accumulation ${best.gradAccum} x ${world}`,
  )
}

/** Checkpointing, sharding, offload, optimizer, method, adapters and quantization: the levers that made it fit. */
function traceLevers(input: SearchTraceInput, { lever, facts, compared }: SearchFacts): void {
  const { reader, mode, workload, shape } = input
  const best = input.ladder.best
  reader.settle(
    'gradCheckpointing',
    best.gradCheckpointing,
    best.gradCheckpointing
      ? 'recomputing activations in backward is part of the fastest setup that fits (the alternatives weighed below)'
      : 'activations fit without recomputation',
    compared,
  )
  reader.settle('sharding', best.sharding, shardingReason(best, shape.gpus * shape.nodes), compared)
  reader.settle('offload', best.offload, offloadReason(best, input.budgetBytes), compared)
  reader.settle(
    'optimizer',
    best.optimizer,
    best.optimizer === 'adamw-8bit'
      ? '8-bit optimizer states (bitsandbytes) make it fit before anything is offloaded'
      : 'the optimizer the packs chose',
    compared,
  )
  const pinned = methodPinned(workload)
  reader.settle(
    'method',
    best.method,
    workload.kind === 'pretrain'
      ? 'a model trained from scratch trains every weight'
      : pinned
        ? 'the method asked for (--method)'
        : `the first of ${input.methodOrder.join(', ')} that fits with ${LEVER_WORDS[lever]} at most`,
    facts,
  )
  reader.settle(
    'lora',
    best.lora ? { rank: best.lora.rank, targets: [...best.lora.targets] } : null,
    best.lora ? adapterReason(mode, best.lora, reader.isPinned('lora')) : 'full training: no adapters',
  )
  reader.settle(
    'quant',
    best.quant,
    best.quant === 'nf4' ? 'QLoRA keeps the frozen base in 4-bit NF4' : 'the base stays in 16-bit',
  )
}

/** The device, GPUs, nodes and strategy the plan trains on. */
function traceDevices(input: SearchTraceInput): void {
  const { reader, shape } = input
  reader.settle('device', shape.device, 'the device the plan trains on')
  reader.settle(
    'gpus',
    shape.gpus,
    shape.device === 'cpu' ? 'CPU training: no GPU' : `data-parallel GPUs per node`,
  )
  reader.settle('nodes', shape.nodes, 'nodes the job spans (--nodes)')
  reader.settle('strategy', shape.strategy, strategyReason(shape.strategy))
}

/** The method was asked for (or pretraining trains every weight), so the plan does not depart from it. */
const methodPinned = (workload: Workload) => workload.method !== 'auto' || workload.kind === 'pretrain'

/** The warning when the winner departs from the rule packs' preferred settings, and why. */
function relaxedWarning(input: SearchTraceInput): Advice | null {
  const { reader, ladder } = input
  const best = ladder.best
  const pinned = methodPinned(input.workload)
  const departures = reader.departures({
    gradCheckpointing: best.gradCheckpointing,
    sharding: best.sharding,
    offload: best.offload,
    optimizer: best.optimizer,
    ...(pinned ? {} : { method: best.method }),
  })
  if (departures.length === 0) return null
  const first = departures[0]?.split(' ')[0] ?? 'gradCheckpointing'
  const preferred = ladder.preferredBest
  const why = preferred
    ? `the rule packs' preferred settings fit but are predicted slower (${rate(preferred)}) than this plan (${rate(best)}), so the plan departs from them`
    : "nothing fits with the rule packs' preferred settings; the plan departs from them to fit"
  return {
    id: 'rule-preference-relaxed',
    message: `${why[0]?.toUpperCase()}${why.slice(1)}: ${departures.join(', ')} (\`rigfit explain ${first}\` shows the setups compared).`,
    source: 'generator',
    expectedGain: null,
  }
}

/** A setup's predicted speed, and its time where the run has a size. */
function rate(c: Candidate): string {
  const hours = Number.isFinite(c.hours) ? `, ${c.hours.toFixed(1)} h` : ''
  return `${Math.round(c.tokensPerSecond)} tokens/s${hours}`
}

function shardingReason(best: Candidate, world: number): string {
  if (best.sharding === 'none')
    return world > 1 ? 'each GPU holds the full training state' : 'one device holds the training state'
  if (world <= 1) return `ZeRO stage ${best.sharding.slice(-1)} carries the offload on one GPU (ZeRO-Offload)`
  return 'sharding the training state across the GPUs is part of the fastest setup that fits'
}

function offloadReason(best: Candidate, budgetBytes: number): string {
  const over = best.overLine
    ? `; ${(((best.deviceBytes - budgetBytes) / budgetBytes) * 100).toFixed(1)} % over the mode's memory line, within its ${BUDGET_TOLERANCE * 100} % tolerance, which spares a mechanism`
    : ''
  if (best.offload === 'none') return `everything stays on the device${over}`
  if (best.offload === 'optimizer')
    return 'optimizer states in host RAM make the fastest setup that fits (the alternatives weighed below)'
  return 'even with optimizer states in host RAM nothing fits: parameters are streamed from host RAM too'
}

function strategyReason(strategy: Settings['strategy']): string {
  switch (strategy) {
    case 'single':
      return 'one device'
    case 'ddp':
      return 'data parallel: a full replica per GPU'
    case 'zero':
      return 'DeepSpeed ZeRO shards the training state across the GPUs'
    case 'zero-offload':
      return 'one GPU per node runs DeepSpeed ZeRO to offload states to host RAM'
    case 'fsdp':
      return 'FSDP shards the training state across the GPUs'
    case 'model-split':
      return 'frozen companion models sit on GPUs of their own; the trained model on one'
    case 'cpu':
      return 'no training GPU: the CPU trains'
  }
}

/** The adapters in words, with why the mode chose them and the alpha the exports write (2 x rank). */
function adapterReason(
  mode: Mode,
  lora: { rank: number; targets: readonly string[] },
  pinned: boolean,
): string {
  const why = pinned ? 'as pinned' : `${mode} mode: ${LORA_REASON_BY_MODE[mode]}`
  return `${describeAdapters(lora)}, alpha ${2 * lora.rank} (2 x rank); ${why}`
}

/** Why the sequence is no shorter: an average example of the data must fit in one. */
function exampleFloorWords(workload: Workload): string {
  const floor = exampleSequence(workload)
  if (floor === null) return ''
  return `; never below ${floor}, which holds an average example (${Math.round(workload.tokensPerExample ?? 0)} tokens)`
}
