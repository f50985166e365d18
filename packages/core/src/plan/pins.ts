import { hasFlashAttention } from '../device/capabilities.js'
import { RigfitError } from '../errors.js'
import type { EstimateDevice } from '../schemas/estimate.js'
import type { Advice } from '../schemas/training-plan.js'
import type { SettingPins, Workload } from '../schemas/workload.js'
import type { Method } from './candidates.js'

export type PinName = keyof SettingPins

/** The command-line flag of each pin, for traces and messages. */
export const PIN_FLAGS: Record<PinName, string> = {
  microBatch: '--micro-batch',
  gradAccum: '--grad-accum',
  precision: '--precision',
  optimizer: '--optimizer',
  gradCheckpointing: '--grad-ckpt',
  attention: '--attention',
  sharding: '--sharding',
  offload: '--offload',
  loraRank: '--lora-rank',
  loraTargets: '--lora-targets',
  quant: '--quant',
}

/** A pin as the user typed it: `--micro-batch 4`, `--no-grad-ckpt`, `--lora-targets q,v`. */
export function pinText(name: PinName, value: SettingPins[PinName]): string {
  if (name === 'gradCheckpointing') return value ? '--grad-ckpt' : '--no-grad-ckpt'
  return `${PIN_FLAGS[name]} ${Array.isArray(value) ? value.join(',') : String(value)}`
}

/** The pins that are set, as [name, value] pairs in flag order. */
export function pinEntries(pins: SettingPins | undefined): [PinName, NonNullable<SettingPins[PinName]>][] {
  if (!pins) return []
  return (Object.keys(PIN_FLAGS) as PinName[]).flatMap((name) => {
    const value = pins[name]
    return value === undefined ? [] : [[name, value] as [PinName, NonNullable<SettingPins[PinName]>]]
  })
}

/** The workload without one pin: what "the nearest plan" is searched with when that pin cannot fit. */
export function withoutPin(workload: Workload, name: PinName): Workload {
  const pins = { ...workload.pins }
  delete pins[name]
  // Dropping the rank drops the adapters' other pins with it: targets alone do not make a method.
  if (name === 'loraRank') delete pins.loraTargets
  return { ...workload, pins }
}

/** Settings the trace records for each pin (a LoRA pin shows in `lora`, the quantisation in `quant`). */
export const PIN_TRACE_SETTING: Record<PinName, string> = {
  microBatch: 'microBatch',
  gradAccum: 'gradAccum',
  precision: 'precision',
  optimizer: 'optimizer',
  gradCheckpointing: 'gradCheckpointing',
  attention: 'attention',
  sharding: 'sharding',
  offload: 'offload',
  loraRank: 'lora',
  loraTargets: 'lora',
  quant: 'quant',
}

/**
 * The methods the pins allow, given the one the user named: adapter pins need LoRA or QLoRA, NF4 is QLoRA, an
 * int8 base is LoRA over 8-bit weights, and no base quantisation rules QLoRA out. Contradictions are usage
 * errors naming both flags.
 */
export function methodsAllowedByPins(workload: Workload): Method[] {
  const pins = workload.pins ?? {}
  const named = workload.kind === 'pretrain' ? 'full' : workload.method
  let methods: Method[] = named === 'auto' ? ['full', 'lora', 'qlora'] : [named]
  const adapters = pins.loraRank !== undefined || pins.loraTargets !== undefined
  if (adapters) methods = methods.filter((method) => method !== 'full')
  if (pins.quant === 'nf4') methods = methods.filter((method) => method === 'qlora')
  if (pins.quant === 'int8') methods = methods.filter((method) => method === 'lora')
  if (pins.quant === 'none') methods = methods.filter((method) => method !== 'qlora')
  if (methods.length === 0) {
    const flags = pinEntries(pins)
      .filter(([name]) => name === 'loraRank' || name === 'loraTargets' || name === 'quant')
      .map(([name, value]) => pinText(name, value))
    const method = workload.kind === 'pretrain' ? 'pretraining (every weight trains)' : `--method ${named}`
    throw new RigfitError('usage', 'E_PIN_CONFLICT', `${flags.join(' ')} cannot go with ${method}.`, {
      suggestion:
        workload.kind === 'pretrain'
          ? 'Adapters and a quantised base belong to fine-tuning: add --model, or drop those flags.'
          : 'Adapters need --method lora or qlora; --quant nf4 is QLoRA (--method qlora); --quant int8 is LoRA over 8-bit weights.',
    })
  }
  return methods
}

/** Checks pins that contradict each other or the target batch, before anything is searched. */
export function checkPins(workload: Workload, gpus: number): void {
  methodsAllowedByPins(workload)
  const pins = workload.pins ?? {}
  const target = workload.targetEffectiveBatch
  if (target !== null && pins.microBatch !== undefined && pins.gradAccum !== undefined) {
    const effective = pins.microBatch * pins.gradAccum * Math.max(1, gpus) * workload.nodes
    if (effective !== target) {
      throw new RigfitError(
        'usage',
        'E_PIN_CONFLICT',
        `--micro-batch ${pins.microBatch} x --grad-accum ${pins.gradAccum} x ${Math.max(1, gpus)} GPU(s) x ${workload.nodes} node(s) is ${effective} sequences, not --target-batch ${target}.`,
        { suggestion: 'Drop one of --micro-batch, --grad-accum or --target-batch: the other two set it.' },
      )
    }
  }
  const { offload, sharding } = pins
  if (offload !== undefined && offload !== 'none' && sharding !== undefined) {
    const fsdpOptimizerOnly = sharding === 'fsdp' && offload === 'optimizer'
    if (
      sharding === 'none' ||
      fsdpOptimizerOnly ||
      (offload === 'all' && (sharding === 'zero1' || sharding === 'zero2'))
    ) {
      const why = fsdpOptimizerOnly
        ? "FSDP's CPU offload moves the parameters with the optimizer states, it has no optimizer-only form"
        : offload === 'all'
          ? 'parameter offload needs ZeRO-3 or FSDP'
          : 'offload needs a ZeRO or FSDP engine'
      throw new RigfitError(
        'usage',
        'E_PIN_CONFLICT',
        `--offload ${offload} cannot run with --sharding ${sharding}: ${why}.`,
        {
          suggestion: 'Use --sharding zero2 or zero3 for optimizer offload, zero3 or fsdp for --offload all.',
        },
      )
    }
  }
}

/** What the trace says of a pinned setting: its value comes from these flags. */
export interface PinTrace {
  text: string
  /** The pinned value (for `lora`, the rank and targets the user gave). */
  value: unknown
}

/** The pinned settings by trace name, each with the flags that pinned it (`lora`: rank and targets together). */
export function pinTraces(workload: Workload): Record<string, PinTrace> {
  const traces: Record<string, PinTrace> = {}
  for (const [name, value] of pinEntries(workload.pins)) {
    const setting = PIN_TRACE_SETTING[name]
    const text = pinText(name, value)
    const before = traces[setting]
    traces[setting] = before
      ? { text: `${before.text} ${text}`, value: { ...(before.value as object), [name]: value } }
      : { text, value: setting === 'lora' ? { [name]: value } : value }
  }
  return traces
}

/**
 * What a pinned precision or attention costs on this device: the plan (or `rigfit estimate`) keeps it, and says so.
 */
export function pinWarnings(
  pins: Pick<SettingPins, 'precision' | 'attention'>,
  device: EstimateDevice,
): Advice[] {
  const warnings: Advice[] = []
  const warn = (id: string, message: string) =>
    warnings.push({ id, message, source: 'command-line', expectedGain: null })
  if (pins.precision?.startsWith('bf16') && !device.bf16) {
    warn(
      'pinned-precision-unsupported',
      `--precision ${pins.precision}: ${device.name} has no native bfloat16, so it runs at its fp32 rate; fp16-mixed uses its tensor cores.`,
    )
  }
  if (pins.attention === 'flash' && device.kind === 'cuda' && !hasFlashAttention(device)) {
    warn(
      'pinned-attention-unsupported',
      `--attention flash: FlashAttention 2 needs compute capability 8.0 or newer; ${device.name} runs SDPA's memory-efficient kernel instead (same memory).`,
    )
  }
  return warnings
}
