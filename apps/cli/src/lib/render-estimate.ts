import {
  type EstimateInput,
  type EstimateResult,
  MEMORY_TERMS,
  memoryPartLabel,
  modelOriginRows,
} from '@rigfit/core'
import { fmtCount, gib as formatGib, grouped } from './format.js'

export interface Paint {
  bold: (text: string) => string
  dim: (text: string) => string
  good: (text: string) => string
  bad: (text: string) => string
}

const gib = (bytes: number) => formatGib(bytes, 2)
const number = (n: number) => grouped(Math.round(n))

function settingsLine(input: EstimateInput): string {
  const parts = [
    `seq ${input.seq}`,
    `micro-batch ${input.microBatch}`,
    `accumulation ${input.gradAccum}`,
    input.precision,
    input.optimizer,
    `${input.attention} attention`,
  ]
  if (input.gradCheckpointing) parts.push('gradient checkpointing')
  if (input.device?.kind === 'cpu') parts.push('CPU')
  else parts.push(`${input.gpus} GPU${input.gpus === 1 ? '' : 's'}`)
  if (input.nodes > 1) parts.push(`× ${input.nodes} nodes`)
  if (input.gpus > 1 && input.interconnect !== null) parts.push(`${input.interconnect} link`)
  if (input.optimizerImpl === 'fused') parts.push('fused optimizer')
  if (input.tf32) parts.push('TF32')
  if (input.sharding !== 'none') parts.push(input.sharding)
  if (input.offload !== 'none') parts.push(`offload ${input.offload}`)
  if (input.lora) parts.push(`LoRA r=${input.lora.rank} on ${input.lora.targets.join(',')}`)
  if (input.quant !== 'none') parts.push(`${input.quant} base`)
  return parts.join(' · ')
}

/** The readable breakdown: terms with the largest marked, the peak, what nvidia-smi would show, speed, verdict. */
export function renderEstimate(
  input: EstimateInput,
  result: EstimateResult,
  paint: Paint,
  warnings: string[] = [],
): string {
  const lines: string[] = []
  const { model } = input
  lines.push(`${paint.bold('Model')}     ${model.id}${model.name !== model.id ? ` (${model.name})` : ''}`)
  for (const [label, text] of modelOriginRows(model)) lines.push(`${label.padEnd(10)}${text}`)
  lines.push(
    `          ${fmtCount(result.params.total)} parameters, ${fmtCount(result.params.trainable)} trainable · ${model.layers} layers × ${model.hidden} hidden`,
  )
  lines.push(`${paint.bold('Settings')}  ${settingsLine(input)}`)
  if (input.device)
    lines.push(`${paint.bold('Device')}    ${input.device.name} (${gib(input.device.vramBytes)})`)
  else if (result.capacity !== null)
    lines.push(`${paint.bold('Device')}    ${gib(result.capacity)} of memory`)
  lines.push('')

  const d = result.perDevice
  const largest = MEMORY_TERMS.reduce((best, term) => (d[term[0]] > d[best[0]] ? term : best))
  lines.push(paint.bold('Memory per device'))
  for (const [key, label] of MEMORY_TERMS) {
    const mark = key === largest[0] ? paint.bold('  ◀ largest') : ''
    lines.push(`  ${label.padEnd(30)} ${gib(d[key]).padStart(12)}${mark}`)
  }
  const phase = result.peakPhase === 'backward' ? 'at the start of backward' : 'at the optimizer step'
  lines.push(`  ${'─'.repeat(43)}`)
  lines.push(`  ${'peak allocated'.padEnd(30)} ${gib(d.peakAllocated).padStart(12)}  ${paint.dim(phase)}`)
  lines.push(`  ${'reserved by the allocator'.padEnd(30)} ${gib(d.reserved).padStart(12)}`)
  if (d.releasable > 0)
    lines.push(
      `  ${'  of which releasable cache'.padEnd(30)} ${gib(d.releasable).padStart(12)}  ${paint.dim('freed activation blocks the optimizer step cannot use; released when the GPU fills')}`,
    )
  lines.push(`  ${memoryPartLabel('cudaContext').padEnd(30)} ${gib(d.cudaContext).padStart(12)}`)
  if (d.communication > 0)
    lines.push(`  ${memoryPartLabel('communication').padEnd(30)} ${gib(d.communication).padStart(12)}`)
  lines.push(
    `  ${paint.bold('total (as nvidia-smi shows)'.padEnd(30))} ${paint.bold(gib(d.total).padStart(12))}`,
  )
  if (result.host.total > 0)
    lines.push(`  ${'host RAM for offloaded state'.padEnd(30)} ${gib(result.host.total).padStart(12)}`)

  if (result.throughput) {
    const t = result.throughput
    lines.push('')
    const perGpu = input.gpus > 1 ? ` (${number(t.tokensPerSecondPerDevice)} per GPU)` : ''
    const c = result.calibration
    const label = c?.label ?? 'predicted'
    lines.push(
      `${paint.bold('Speed')}     ${number(t.tokensPerSecond)} tokens/s${perGpu} (${label}) · step ${t.stepSeconds.toFixed(t.stepSeconds < 10 ? 3 : 1)} s · MFU ${(t.mfu * 100).toFixed(0)}%`,
    )
    if (c && c.match !== 'none')
      lines.push(
        `          ${paint.dim(`the model alone predicts ${number(c.predictedTokensPerSecond)}: ${c.reason}`)}`,
      )
  }

  for (const warning of warnings) lines.push(`${paint.dim('Note:')} ${warning}`)
  lines.push('')
  lines.push(verdict(result, paint))
  return `${lines.join('\n')}\n`
}

/**
 * What the validation says about predictions of this kind of run: the band, the n of measured runs it comes from
 * and, when this kind has too few of its own, the kind it pools into.
 */
function band(result: EstimateResult): string {
  const c = result.confidence
  if (!c) return ''
  const runs = c.basis === 'all' ? 'runs of every kind' : `${c.basis} runs`
  const pooled = c.pooled ? `; too few ${c.kind} runs for a band of their own` : ''
  return `Likely ${gib(c.low)}–${gib(c.high)} (−${(c.over * 100).toFixed(0)}%/+${(c.under * 100).toFixed(0)}%: ${(c.coverage * 100).toFixed(0)}% of n=${c.rows} measured ${runs}, held out by source, fell inside${pooled}).`
}

function verdict(result: EstimateResult, paint: Paint): string {
  // The cache the allocator frees when the device is full is not needed.
  const total = result.perDevice.total - result.perDevice.releasable
  if (result.capacity === null) {
    return `Needs ${gib(total)} per device. Pass --gpu or --vram to check the fit.`
  }
  const headroom = result.headroom ?? result.capacity - total
  const share = ((headroom / result.capacity) * 100).toFixed(0)
  const note = band(result)
  if (result.verdict === 'fits') {
    return `${paint.good(`✓ Fits: ${gib(total)} of ${gib(result.capacity)}, ${gib(headroom)} headroom (${share}%).`)} ${paint.dim(note)}`
  }
  if (result.verdict === 'borderline') {
    const where = headroom >= 0 ? `${gib(headroom)} headroom (${share}%)` : `${gib(-headroom)} over`
    return `${paint.bad(`◐ Borderline: ${gib(total)} of ${gib(result.capacity)}, ${where}, inside the error band.`)} ${paint.dim(note)}`
  }
  return `${paint.bad(`✗ Does not fit: needs ${gib(total)} of ${gib(result.capacity)} (${gib(-headroom)} over).`)} ${paint.dim(note)}`
}
