import { halfType, type TrainingPlan } from '@rigfit/core'
import type { Engine } from './engine.js'
import { loraTargetModules } from './lora-modules.js'
import { usesConv1D } from './model-classes.js'
import { isPureHalf } from './plan-facts.js'
import { jsonDocument, textFile } from './render.js'
import type { ExportFile } from './types.js'

/** PEFT's adapter config file name (`LoraConfig.from_pretrained(dir)` reads it). */
export const ADAPTER_CONFIG_FILE = 'adapter_config.json'
/** transformers' `BitsAndBytesConfig.from_json_file` / `from_dict` input, as `to_json_file` writes it. */
export const QUANTIZATION_CONFIG_FILE = 'quantization_config.json'

/**
 * LoRA dropout: the memory estimate assumes none (with dropout PEFT keeps a dropped copy of each adapted
 * layer's input), so the exports write 0 to keep the plan's memory.
 */
export const LORA_DROPOUT = 0

/** LoRA alpha: twice the rank, the common choice that keeps the update scale alpha/r at 2 whatever the rank. */
export function loraAlpha(rank: number): number {
  return 2 * rank
}

/** The model a fine-tune starts from: the Hugging Face repository or local folder; null for pretraining. */
export function baseModelId(plan: TrainingPlan): string | null {
  if (plan.workload.kind !== 'finetune') return null
  const name = plan.model.name
  // A model read from a local config.json loads from the folder that holds it.
  return /(^|\/)config\.json$/.test(name) ? name.replace(/\/?config\.json$/, '') || '.' : name
}

/** The torch dtype name a precision computes in (BitsAndBytesConfig and run_clm take these strings). */
export function computeDtypeName(plan: TrainingPlan): 'bfloat16' | 'float16' | 'float32' {
  const half = halfType(plan.settings.precision)
  return half === 'bf16' ? 'bfloat16' : half === 'fp16' ? 'float16' : 'float32'
}

/**
 * The dtype the model is loaded in, stated in every format that loads one, since the loaders' defaults differ
 * (transformers before v5 loads fp32, v5 the checkpoint's own type). rigfit prices a frozen base (LoRA, QLoRA) in
 * the compute half type and a pure-half plan's weights in that type; weights that train under autocast, and every
 * fp32 plan, are fp32.
 */
export function loadDtypeName(plan: TrainingPlan): 'bfloat16' | 'float16' | 'float32' {
  return plan.settings.lora !== null || isPureHalf(plan.settings.precision)
    ? computeDtypeName(plan)
    : 'float32'
}

/** Why the model loads in `loadDtypeName`'s type, for the formats that carry comments. */
export function loadDtypeComment(plan: TrainingPlan): string {
  const precision = plan.settings.precision
  if (plan.settings.lora !== null)
    return 'The frozen base loads in the compute type; the adapters train in fp32'
  if (isPureHalf(precision)) return 'Weights kept in the half type (pure half precision)'
  return precision === 'fp32'
    ? 'fp32 training'
    : 'Trained weights stay fp32; autocast computes in the half type'
}

/** PEFT `LoraConfig` fields (adapter_config.json), or null for full training. */
export function peftAdapterConfig(
  plan: TrainingPlan,
  warn: (id: string, message: string) => void,
): Record<string, unknown> | null {
  const lora = plan.settings.lora
  if (lora === null) return null
  return {
    peft_type: 'LORA',
    task_type: plan.model.kind === 'encoder' ? 'SEQ_CLS' : 'CAUSAL_LM',
    base_model_name_or_path: baseModelId(plan),
    // PEFT's LoraConfig.revision: the base model's revision, so the adapter reloads onto the weights it trained on.
    ...(plan.model.hub && plan.workload.kind === 'finetune'
      ? { revision: plan.model.hub.commit ?? plan.model.hub.revision }
      : {}),
    r: lora.rank,
    lora_alpha: loraAlpha(lora.rank),
    lora_dropout: LORA_DROPOUT,
    target_modules: loraTargetModules(plan.model, lora.targets, warn),
    // GPT-2's projections are Conv1D (weights stored transposed); PEFT adapts them only with this flag.
    fan_in_fan_out: usesConv1D(plan.model),
    bias: 'none',
    inference_mode: false,
  }
}

/** Sharded training flattens the 4-bit weights with the others, so they must be stored in the compute dtype. */
function quantStorage(plan: TrainingPlan, engine: Engine): string {
  const sharded = engine.kind === 'fsdp' || (engine.kind === 'deepspeed' && engine.stage === 3)
  return sharded ? computeDtypeName(plan) : 'uint8'
}

/**
 * transformers `BitsAndBytesConfig` fields for a quantized base model, or null without quantization. 4-bit uses
 * double quantization, which the memory estimate counts (NF4_BYTES_PER_PARAM).
 */
export function bnbQuantizationConfig(plan: TrainingPlan, engine: Engine): Record<string, unknown> | null {
  // Read as a string: 4-bit fp4 may join nf4 in the schema's vocabulary.
  const quant: string = plan.settings.quant
  if (quant === 'none') return null
  if (quant === 'int8') return { quant_method: 'bitsandbytes', load_in_8bit: true, load_in_4bit: false }
  if (quant !== 'nf4' && quant !== 'fp4') throw new Error(`quantization ${quant} has no bitsandbytes form`)
  return {
    quant_method: 'bitsandbytes',
    load_in_4bit: true,
    load_in_8bit: false,
    bnb_4bit_quant_type: quant,
    bnb_4bit_compute_dtype: computeDtypeName(plan),
    bnb_4bit_use_double_quant: true,
    bnb_4bit_quant_storage: quantStorage(plan, engine),
  }
}

/** adapter_config.json and quantization_config.json for the plan's method; none for full training. */
export function methodFiles(
  plan: TrainingPlan,
  engine: Engine,
  warn: (id: string, message: string) => void,
): ExportFile[] {
  const files: ExportFile[] = []
  const adapter = peftAdapterConfig(plan, warn)
  if (adapter) files.push(textFile(ADAPTER_CONFIG_FILE, jsonDocument(adapter)))
  const quantization = bnbQuantizationConfig(plan, engine)
  if (quantization) files.push(textFile(QUANTIZATION_CONFIG_FILE, jsonDocument(quantization)))
  return files
}

/** One line naming the method for file headers, e.g. "QLoRA r=64 alpha=128 on q_proj, v_proj over nf4 weights". */
export function methodSummary(plan: TrainingPlan): string {
  const s = plan.settings
  const base = baseModelId(plan)
  const from = base ? ` of ${base}` : ''
  if (s.lora === null) return `${plan.workload.kind === 'pretrain' ? 'pretraining' : 'full fine-tune'}${from}`
  const quant = s.quant === 'none' ? '' : ` over ${s.quant} weights`
  return `${s.method === 'qlora' ? 'QLoRA' : 'LoRA'} r=${s.lora.rank} alpha=${loraAlpha(s.lora.rank)} dropout=${LORA_DROPOUT} on ${s.lora.targets.join(', ')}${quant}${from}`
}
