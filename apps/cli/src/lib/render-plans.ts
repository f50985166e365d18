import { type Mode, modelOriginRows, type PerformanceScore, type TrainingPlan } from '@rigfit/core'
import { fmtCount, fmtHours, gib, table } from './format.js'

type Plans = Partial<Record<Mode, TrainingPlan>>

/** The one-line summary of each plan setting shown side by side by `analyze`. */
export function renderPlansSideBySide(plans: Plans): string {
  const modes = (['conservative', 'balanced', 'extreme'] as const).filter((mode) => plans[mode])
  const column = (f: (plan: TrainingPlan) => string) => modes.map((mode) => f(plans[mode] as TrainingPlan))
  return table([
    ['', ...modes.map((mode) => mode.toUpperCase())],
    [
      'Model',
      ...column(
        (p) =>
          `${fmtCount(p.params.total)} ${p.model.modelType}${p.settings.method === 'full' ? '' : ` ${p.settings.method}`}`,
      ),
    ],
    ['Trainable', ...column((p) => fmtCount(p.params.trainable))],
    [
      'Micro-batch x accum',
      ...column(
        (p) =>
          `${p.settings.microBatch} x ${p.settings.gradAccum}${p.settings.gpus > 1 ? ` x ${p.settings.gpus} GPUs` : ''} = ${p.settings.effectiveBatch}`,
      ),
    ],
    ['Sequence', ...column((p) => String(p.settings.seq))],
    ['Precision', ...column((p) => p.settings.precision)],
    ['Checkpointing', ...column((p) => (p.settings.gradCheckpointing ? 'on' : 'off'))],
    [
      'Strategy',
      ...column(
        (p) => p.settings.strategy + (p.settings.sharding !== 'none' ? ` (${p.settings.sharding})` : ''),
      ),
    ],
    [
      'Memory',
      ...column(
        (p) =>
          `${gib(p.memory.perDevice.total)} of ${gib(p.memory.capacityBytes)} (${Math.round(p.memory.usedFraction * 100)}%)`,
      ),
    ],
    ['Tokens/s', ...column((p) => `${fmtCount(p.throughput.tokensPerSecond)} (${speedLabel(p)})`)],
    ['Token budget', ...column((p) => `${fmtCount(p.tokens.budget)} (${p.tokens.binding})`)],
    ['Time', ...column((p) => fmtHours(p.time.totalHours))],
    ['Power', ...column((p) => `${p.power.watts} W`)],
    ['Energy', ...column((p) => `${p.power.energyKWh.toFixed(p.power.energyKWh < 10 ? 2 : 0)} kWh`)],
    ...(modes.some((mode) => plans[mode]?.cost)
      ? [['Cost', ...column((p) => (p.cost ? `$${p.cost.total.toFixed(2)}` : '-'))]]
      : []),
  ])
}

export function renderScore(score: PerformanceScore): string {
  return [
    `Performance score: ${score.score.toFixed(1)}/10 (${score.label} for LLM training)`,
    ...score.reasons.map((r) => `  - ${r}`),
  ].join('\n')
}

/**
 * Suggestions and warnings of several plans, each once, with the modes that carry it. One id can say different
 * things in different modes (their figures differ): each mode's own text is kept.
 */
export function collectAdvice(
  plans: Plans,
  kind: 'warnings' | 'suggestions',
): { id: string; message: string; expectedGain: string | null; modes: Mode[]; source: string }[] {
  const byId = new Map<
    string,
    { id: string; message: string; expectedGain: string | null; modes: Mode[]; source: string }
  >()
  for (const [mode, plan] of Object.entries(plans) as [Mode, TrainingPlan][]) {
    for (const item of plan[kind]) {
      const key = `${item.id}\u0000${item.message}`
      const entry = byId.get(key) ?? {
        id: item.id,
        message: item.message,
        expectedGain: item.expectedGain,
        modes: [],
        source: item.source,
      }
      entry.modes.push(mode)
      byId.set(key, entry)
    }
  }
  return [...byId.values()]
}

export function renderAdviceList(items: ReturnType<typeof collectAdvice>, total: number): string {
  if (items.length === 0) return '  (none)'
  return items
    .map((item) => {
      const where = item.modes.length === total ? '' : ` [${item.modes.join(', ')}]`
      const gain = item.expectedGain ? ` (${item.expectedGain})` : ''
      return `  - ${item.message}${gain}${where}`
    })
    .join('\n')
}

/** One plan in full, for `rigfit plan`. */
export function renderPlan(plan: TrainingPlan): string {
  const m = plan.memory.perDevice
  const lines = [
    `${plan.mode.toUpperCase()} plan for ${plan.hardware.summary}`,
    `${plan.workload.description}`,
    '',
    table(settingRows(plan)),
    '',
    `Memory per device: ${gib(m.total)} of ${gib(plan.memory.capacityBytes)} (${Math.round(plan.memory.usedFraction * 100)}%, budget ${Math.round(plan.memory.budgetFraction * 100)}%)`,
    table(memoryRows(m)),
    `  peak allocated ${gib(m.peakAllocated, 2)}, reserved ${gib(m.reserved, 2)}${m.releasable > 0 ? ` (${gib(m.releasable, 2)} of it cache released when the GPU fills)` : ''}${plan.memory.hostBytes > 0 ? `; host RAM ${gib(plan.memory.hostBytes, 2)}` : ''}`,
    '',
    ...runLines(plan),
  ]
  if (plan.placement) {
    lines.push('', 'Placement:', ...plan.placement.map((d) => `  GPU ${d.device}: ${d.models.join(', ')}`))
  }
  lines.push(
    '',
    'Suggestions:',
    renderAdviceList(
      plan.suggestions.map((a) => ({ ...a, modes: [plan.mode] })),
      1,
    ),
  )
  lines.push(
    '',
    'Warnings:',
    renderAdviceList(
      plan.warnings.map((a) => ({ ...a, modes: [plan.mode] })),
      1,
    ),
  )
  lines.push('', 'Why: `rigfit explain <setting>` shows the rules and facts behind each setting.')
  return lines.join('\n')
}

/** The settings table: model, parameters, method, devices, batch, precision, optimizer, memory levers, loader. */
function settingRows(plan: TrainingPlan): string[][] {
  const s = plan.settings
  return [
    [
      'Model',
      `${plan.model.name}: ${plan.model.layers} layers x ${plan.model.hidden} hidden, ${plan.model.heads} heads (${plan.model.kvHeads} kv), vocab ${plan.model.vocab}`,
    ],
    ...modelOriginRows(plan.model),
    ['Parameters', `${fmtCount(plan.params.total)} total, ${fmtCount(plan.params.trainable)} trainable`],
    [
      'Method',
      s.method +
        (s.lora ? ` (rank ${s.lora.rank} on ${s.lora.targets.join(',')})` : '') +
        (s.quant !== 'none' ? `, ${s.quant} base` : ''),
    ],
    [
      'Device',
      `${s.device}${s.gpus > 0 ? ` x ${s.gpus}` : ''}${s.nodes > 1 ? ` x ${s.nodes} nodes` : ''}, strategy ${s.strategy}, backend ${s.backend}`,
    ],
    [
      'Batch',
      `micro-batch ${s.microBatch} x accumulation ${s.gradAccum}${s.gpus > 1 ? ` x ${s.gpus} GPUs` : ''}${s.nodes > 1 ? ` x ${s.nodes} nodes` : ''} = ${s.effectiveBatch} sequences of ${s.seq} tokens`,
    ],
    ['Precision', `${s.precision}${s.tf32 ? ', TF32 matmuls' : ''}`],
    ['Optimizer', `${s.optimizer}${s.fusedOptimizer ? ' (fused)' : ''}, lr ${s.learningRate}`],
    [
      'Memory saving',
      `checkpointing ${s.gradCheckpointing ? 'on' : 'off'}, attention ${s.attention}, sharding ${s.sharding}, offload ${s.offload}`,
    ],
    ['Compile', s.compile.enabled ? `torch.compile (${s.compile.mode})` : 'off'],
    [
      'Data loading',
      `${s.dataloader.workers} workers, pin memory ${s.dataloader.pinMemory ? 'on' : 'off'}, prefetch ${s.dataloader.prefetchFactor ?? '-'}; ${s.threads} threads; cudnn.benchmark ${s.cudnnBenchmark ? 'on' : 'off'}`,
    ],
  ]
}

/** The memory terms per device, the largest marked; NCCL's buffers only where there are any. */
function memoryRows(m: TrainingPlan['memory']['perDevice']): string[][] {
  const largest = (['weights', 'gradients', 'optimizer', 'activations', 'logits', 'other'] as const).reduce(
    (a, b) => (m[a] >= m[b] ? a : b),
  )
  return (
    [
      'weights',
      'gradients',
      'optimizer',
      'activations',
      'logits',
      'other',
      'cudaContext',
      'communication',
    ] as const
  )
    .filter((key) => key !== 'communication' || m[key] > 0)
    .map((key) => [`  ${key}`, gib(m[key], 2) + (key === largest ? '  <- largest' : '')])
}

/** Speed, tokens, time and power, cost, checkpoints. */
function runLines(plan: TrainingPlan): string[] {
  return [
    `Speed (${speedLabel(plan)}${speedCorrection(plan)}): ${fmtCount(plan.throughput.tokensPerSecond)} tokens/s (${fmtCount(plan.throughput.tokensPerSecondPerDevice)} per device), ${plan.throughput.stepSeconds.toFixed(2)} s per step, MFU ${(plan.throughput.mfu * 100).toFixed(0)}%`,
    `Tokens: ${fmtCount(plan.tokens.budget)} (${plan.tokens.tokensPerParam.toFixed(1)} per parameter; bound by ${plan.tokens.binding}) in ${plan.time.steps} steps`,
    `Time: ${fmtHours(plan.time.totalHours)}; power ${plan.power.watts} W (${Math.round(plan.power.tdpFraction * 100)}% of TDP), energy ${plan.power.energyKWh.toFixed(2)} kWh${plan.power.psuHeadroomWatts !== null ? `, PSU headroom ${plan.power.psuHeadroomWatts} W` : ''}`,
    ...(plan.cost
      ? [
          `Cost: $${plan.cost.total.toFixed(2)} at $${plan.cost.pricePerHour}/h${plan.cost.nodes > 1 ? ` x ${plan.cost.nodes} nodes` : ''} for ${fmtHours(plan.time.totalHours)}`,
        ]
      : []),
    `Checkpoints: every ${plan.checkpoints.intervalMinutes} min, ${plan.checkpoints.kept} kept x ${gib(plan.checkpoints.sizeBytes)}; disk needed ${gib(plan.checkpoints.diskNeededBytes)}${plan.checkpoints.diskFreeBytes !== null ? ` of ${gib(plan.checkpoints.diskFreeBytes)} free` : ''}`,
  ]
}

/** What a plan's speed is: "measured on this machine" (calibration records of its settings) or "predicted". */
export function speedLabel(plan: TrainingPlan): string {
  return plan.calibration?.label ?? 'predicted'
}

/** How the calibration store moved the prediction, when it did. */
function speedCorrection(plan: TrainingPlan): string {
  const c = plan.calibration
  if (!c || c.match === 'none') return ''
  const from =
    c.label === 'predicted'
      ? `, x${c.factor.toFixed(2)} from ${c.records.length} record(s) of this machine`
      : ''
  return `${from}; the model alone predicts ${fmtCount(c.predictedTokensPerSecond)}`
}
