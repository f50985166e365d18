import { Flags } from '@oclif/core'
import {
  Attention,
  LoraTarget,
  type ModelSpec,
  Offload,
  Optimizer,
  Precision,
  Quantization,
  resolveLoraTargets,
  type SettingPins,
  Sharding,
} from '@rigfit/core'

const helpGroup = 'PINNED SETTINGS'

/**
 * The settings `estimate` takes, as pins for `plan` and `analyze`: a pinned value is kept in every mode (or the
 * plan fails naming it), the rest is searched. No defaults: an absent flag leaves the setting to the planner.
 */
export const pinFlags = {
  'micro-batch': Flags.integer({
    description: 'Sequences per GPU per forward pass.',
    min: 1,
    max: 1_000_000,
    helpGroup,
  }),
  'grad-accum': Flags.integer({
    description: 'Micro-batches accumulated per optimizer step.',
    min: 1,
    max: 1_000_000,
    helpGroup,
  }),
  precision: Flags.option({
    options: Precision.options,
    description: 'Number format of training.',
    helpGroup,
  })(),
  optimizer: Flags.option({
    options: Optimizer.options,
    description: 'Optimizer (adamw-8bit: bitsandbytes 8-bit states).',
    helpGroup,
  })(),
  'grad-ckpt': Flags.boolean({
    description: 'Gradient checkpointing on (--grad-ckpt) or off (--no-grad-ckpt).',
    allowNo: true,
    helpGroup,
  }),
  attention: Flags.option({
    options: Attention.options,
    description: 'Attention implementation.',
    helpGroup,
  })(),
  sharding: Flags.option({
    options: Sharding.options,
    description: 'ZeRO stage or FSDP full-shard across the GPUs.',
    helpGroup,
  })(),
  offload: Flags.option({
    options: Offload.options,
    description: 'Optimizer states (or also weights) in host RAM; needs --sharding zero2/zero3/fsdp.',
    helpGroup,
  })(),
  'lora-rank': Flags.integer({
    description: 'LoRA adapter rank (implies LoRA or QLoRA).',
    min: 1,
    max: 65_536,
    helpGroup,
  }),
  'lora-targets': Flags.string({
    description: `Layers to adapt, comma-separated: ${LoraTarget.options.join(',')}, all-linear, or the model's module names as PEFT takes them (q_proj, c_attn, query_key_value, ...).`,
    helpValue: 'q,k,v,...',
    helpGroup,
  }),
  quant: Flags.option({
    options: Quantization.options,
    description: 'Frozen base in 4-bit NF4 (QLoRA), 8-bit (LoRA over int8), or 16-bit (none).',
    helpGroup,
  })(),
}

export interface PinFlagValues {
  'micro-batch'?: number | undefined
  'grad-accum'?: number | undefined
  precision?: Precision | undefined
  optimizer?: Optimizer | undefined
  'grad-ckpt'?: boolean | undefined
  attention?: Attention | undefined
  sharding?: Sharding | undefined
  offload?: Offload | undefined
  'lora-rank'?: number | undefined
  'lora-targets'?: string | undefined
  quant?: Quantization | undefined
}

/** The pins of the command line, only those given; LoRA targets named as `model`'s modules (PEFT's names) too. */
export function pinsFromFlags(flags: PinFlagValues, model: ModelSpec | null): SettingPins {
  const pins: SettingPins = {
    microBatch: flags['micro-batch'],
    gradAccum: flags['grad-accum'],
    precision: flags.precision,
    optimizer: flags.optimizer,
    gradCheckpointing: flags['grad-ckpt'],
    attention: flags.attention,
    sharding: flags.sharding,
    offload: flags.offload,
    loraRank: flags['lora-rank'],
    loraTargets:
      flags['lora-targets'] === undefined ? undefined : resolveLoraTargets(flags['lora-targets'], model),
    quant: flags.quant,
  }
  return Object.fromEntries(Object.entries(pins).filter(([, value]) => value !== undefined)) as SettingPins
}
