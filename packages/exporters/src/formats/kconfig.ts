import { processesPerNode, type TrainingPlan } from '@rigfit/core'
import { methodSummary } from '../method.js'
import { optimizerSummary, planSlug } from '../plan-facts.js'
import { commentLines, provenance, textFile } from '../render.js'
import type { Exporter, FormatContext } from '../types.js'

/** The Kconfig symbols of the AUTO hyper-parameter system this format targets. */
export const KCONFIG_SYMBOLS = [
  'CONFIG_HYPER_PARAM_AUTO',
  'CONFIG_HYPER_PARAM_MANUAL',
  'CONFIG_BATCH_SIZE',
  'CONFIG_TARGET_EFFECTIVE_BATCH',
  'CONFIG_COMPILE_AUTO',
  'CONFIG_COMPILE_MANUAL',
  'CONFIG_COMPILE_MODEL',
] as const

export function kconfigPath(plan: TrainingPlan): string {
  return `${planSlug(plan)}_defconfig`
}

/** Kconfig writes an unset bool as a comment, so a defconfig states both sides of each choice. */
function bool(symbol: string, on: boolean): string {
  return on ? `${symbol}=y` : `# ${symbol} is not set`
}

function defconfig(plan: TrainingPlan, ctx: FormatContext): string {
  const s = plan.settings
  const auto = ctx.portable
  const header = [
    provenance(plan),
    auto
      ? 'Portable: the trainer picks batch size and compile for the GPU it finds, keeping the target effective batch.'
      : `Pinned to this plan: batch ${s.microBatch} x accumulation ${s.gradAccum} x ${processesPerNode(s)} GPU(s) x ${s.nodes} node(s) = ${s.effectiveBatch}.`,
  ]
  if (s.method !== 'full') {
    ctx.warn(
      'kconfig-method',
      `The AUTO symbols have no place for the ${s.method === 'qlora' ? 'QLoRA' : 'LoRA'} method: the defconfig states it in a comment (${methodSummary(plan)}); apply it in the model-specific config, or export the hf or pytorch format for PEFT-ready configs.`,
    )
  }
  if (s.nodes > 1) {
    ctx.warn(
      'kconfig-nodes',
      `The AUTO formula counts the GPUs of one machine; across ${s.nodes} nodes the target covers all of them.`,
    )
  }
  const lines = [
    commentLines(header, '# '),
    `# Method: ${methodSummary(plan)}; set it in the model-specific config.`,
    `# Sequence length ${s.seq}; precision ${s.precision}; strategy ${s.strategy}, sharding ${s.sharding}, offload ${s.offload}.`,
    `# Optimizer: ${optimizerSummary(plan)}; set it in the model-specific config.`,
    '# Hyperparameters',
    bool('CONFIG_HYPER_PARAM_AUTO', auto),
    bool('CONFIG_HYPER_PARAM_MANUAL', !auto),
  ]
  if (!auto)
    lines.push(
      `CONFIG_BATCH_SIZE=${s.microBatch}`,
      `# Gradient accumulation ${s.gradAccum}: set it in the model-specific config.`,
    )
  lines.push(
    `CONFIG_TARGET_EFFECTIVE_BATCH=${s.effectiveBatch}`,
    '# torch.compile',
    bool('CONFIG_COMPILE_AUTO', auto),
    bool('CONFIG_COMPILE_MANUAL', !auto),
  )
  if (!auto) lines.push(bool('CONFIG_COMPILE_MODEL', s.compile.enabled))
  return `${lines.join('\n')}\n`
}

/** Parses `CONFIG_X=value` and `# CONFIG_X is not set` lines into symbol -> value ('n' for unset). */
export function parseDefconfig(text: string): Map<string, string> {
  const values = new Map<string, string>()
  for (const line of text.split('\n')) {
    const set = /^(CONFIG_\w+)=(.*)$/.exec(line)
    const unset = /^# (CONFIG_\w+) is not set$/.exec(line)
    if (set?.[1]) values.set(set[1], set[2] ?? '')
    else if (unset?.[1]) values.set(unset[1], 'n')
  }
  return values
}

export const kconfigFormat: Exporter = {
  name: 'kconfig',
  description:
    'Kconfig defconfig fragment (CONFIG_HYPER_PARAM_*, CONFIG_BATCH_SIZE, CONFIG_TARGET_EFFECTIVE_BATCH, CONFIG_COMPILE_*)',
  unsupportedReason: () => null,
  render: (plan, ctx) => [textFile(kconfigPath(plan), defconfig(plan, ctx))],
  validate(files, plan) {
    const path = kconfigPath(plan)
    const file = files.find((f) => f.path === path)
    if (!file) return [`${path}: missing from the export`]
    const values = parseDefconfig(file.content)
    const problems = [...values.keys()]
      .filter((k) => !(KCONFIG_SYMBOLS as readonly string[]).includes(k))
      .map((k) => `${path}: unknown symbol ${k}`)
    const on = (k: string) => values.get(k) === 'y'
    if (on('CONFIG_HYPER_PARAM_AUTO') === on('CONFIG_HYPER_PARAM_MANUAL'))
      problems.push(`${path}: exactly one of HYPER_PARAM_AUTO / MANUAL must be y`)
    if (on('CONFIG_COMPILE_AUTO') === on('CONFIG_COMPILE_MANUAL'))
      problems.push(`${path}: exactly one of COMPILE_AUTO / MANUAL must be y`)
    if (
      on('CONFIG_HYPER_PARAM_MANUAL') &&
      values.get('CONFIG_BATCH_SIZE') !== String(plan.settings.microBatch)
    ) {
      problems.push(`${path}: CONFIG_BATCH_SIZE != micro-batch ${plan.settings.microBatch}`)
    }
    if (values.get('CONFIG_TARGET_EFFECTIVE_BATCH') !== String(plan.settings.effectiveBatch)) {
      problems.push(
        `${path}: CONFIG_TARGET_EFFECTIVE_BATCH != effective batch ${plan.settings.effectiveBatch}`,
      )
    }
    return problems
  },
}
