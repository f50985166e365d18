import { halfType, isAmpereOrNewer, type ModelSpec, planDevice, type TrainingPlan } from '@rigfit/core'
import { z } from 'zod'
import {
  type Engine,
  engineOf,
  fsdpShardingStrategy,
  launchBackend,
  warnFsdpAsZero3,
  warnNvmePath,
} from '../engine.js'
import { baseModelId, loadDtypeName, methodFiles } from '../method.js'
import { ATTN_IMPLEMENTATION, layerClassName } from '../model-classes.js'
import {
  checkpointDir,
  checkpointEverySteps,
  DEFAULT_SEED,
  isPureHalf,
  optimizationOf,
} from '../plan-facts.js'
import { jsonDocument, textFile } from '../render.js'
import type { Exporter, ExportFile, FormatContext } from '../types.js'
import { validateStructured } from '../validate.js'
import { buildDeepSpeedConfig, DS_CONFIG_FILE, validateDeepSpeedConfig } from './deepspeed-config.js'

export const HF_ARGS_FILE = 'training_args.json'
export const HF_MODEL_CONFIG_FILE = 'config.json'
/** The model and data arguments of transformers' run_clm.py example (ModelArguments, DataTrainingArguments). */
export const HF_MODEL_ARGS_FILE = 'model_args.json'

const OPTIM_NAMES: Record<TrainingPlan['settings']['optimizer'], string> = {
  adamw: 'adamw_torch',
  'adamw-8bit': 'adamw_bnb_8bit',
  adafactor: 'adafactor',
  sgd: 'sgd',
  'sgd-momentum': 'sgd',
}

/** The TrainingArguments fields rigfit writes; every name is a real TrainingArguments field. */
const HfTrainingArguments = z
  .strictObject({
    output_dir: z.string(),
    per_device_train_batch_size: z.number().int().positive(),
    gradient_accumulation_steps: z.number().int().positive(),
    max_steps: z.number().int().positive(),
    learning_rate: z.number().positive(),
    lr_scheduler_type: z.literal('cosine'),
    warmup_steps: z.number().int().nonnegative(),
    weight_decay: z.number().nonnegative(),
    adam_beta1: z.number(),
    adam_beta2: z.number(),
    adam_epsilon: z.number().positive(),
    optim: z.string(),
    max_grad_norm: z.number().nonnegative(),
    bf16: z.boolean(),
    fp16: z.boolean(),
    tf32: z.boolean().optional(),
    gradient_checkpointing: z.boolean(),
    torch_compile: z.boolean(),
    torch_compile_mode: z.enum(['default', 'reduce-overhead', 'max-autotune']).optional(),
    dataloader_num_workers: z.number().int().nonnegative(),
    dataloader_pin_memory: z.boolean(),
    dataloader_persistent_workers: z.boolean(),
    dataloader_prefetch_factor: z.number().int().positive().optional(),
    logging_steps: z.number().int().positive(),
    save_strategy: z.literal('steps'),
    save_steps: z.number().int().positive(),
    save_total_limit: z.number().int().positive(),
    seed: z.number().int(),
    report_to: z.literal('none'),
    use_cpu: z.boolean(),
    ddp_backend: z.enum(['nccl', 'gloo']).optional(),
    deepspeed: z.literal(DS_CONFIG_FILE).optional(),
    fsdp: z.string().optional(),
    fsdp_config: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((a) => !(a.bf16 && a.fp16), { message: 'bf16 and fp16 are both true' })
  .refine((a) => a.dataloader_num_workers > 0 || a.dataloader_prefetch_factor === undefined, {
    message: 'dataloader_prefetch_factor needs dataloader_num_workers > 0',
  })

type HfTrainingArguments = z.infer<typeof HfTrainingArguments>

const SGD_MOMENTUM_NOTE =
  'TrainingArguments has no momentum field for sgd; pass optim_args or a custom optimizer for momentum.'

export function buildTrainingArguments(plan: TrainingPlan, ctx: FormatContext): HfTrainingArguments {
  const s = plan.settings
  const half = halfType(s.precision)
  const engine = engineOf(plan)
  const halfWeightsTrain = isPureHalf(s.precision) && s.lora === null
  if (halfWeightsTrain) {
    ctx.warn(
      'hf-pure-half',
      `The plan trains in pure ${half} (${s.precision}): the weights load in ${half === 'bf16' ? 'bfloat16' : 'float16'} (model_args.json) and training_args.json leaves bf16/fp16 off, since those switch autocast and fp16's GradScaler, which cannot unscale fp16 gradients.`,
    )
  }
  if (s.optimizer === 'sgd-momentum') ctx.warn('hf-sgd-momentum', SGD_MOMENTUM_NOTE)
  const opt = optimizationOf(plan)
  const args: HfTrainingArguments = {
    output_dir: checkpointDir(ctx.runName),
    per_device_train_batch_size: s.microBatch,
    gradient_accumulation_steps: s.gradAccum,
    max_steps: Math.max(1, plan.time.steps),
    learning_rate: s.learningRate,
    lr_scheduler_type: 'cosine',
    warmup_steps: opt.warmupSteps,
    weight_decay: opt.weightDecay,
    adam_beta1: opt.beta1,
    adam_beta2: opt.beta2,
    adam_epsilon: opt.epsilon,
    optim:
      s.optimizer === 'adamw' && s.fusedOptimizer && s.device !== 'cpu'
        ? 'adamw_torch_fused'
        : OPTIM_NAMES[s.optimizer],
    max_grad_norm: opt.gradClip,
    // The Trainer's flags switch autocast (and fp16's GradScaler, which refuses fp16 gradients): a pure-half full
    // fine-tune loads its weights in the half type (model_args.json) and leaves both off. Adapters train in fp32
    // beside a half base (PEFT), so a LoRA plan keeps the flag.
    bf16: half === 'bf16' && !halfWeightsTrain,
    fp16: half === 'fp16' && !halfWeightsTrain,
    gradient_checkpointing: s.gradCheckpointing,
    torch_compile: s.compile.enabled,
    dataloader_num_workers: s.dataloader.workers,
    dataloader_pin_memory: s.dataloader.pinMemory,
    dataloader_persistent_workers: s.dataloader.persistentWorkers,
    logging_steps: 10,
    save_strategy: 'steps',
    save_steps: checkpointEverySteps(plan),
    save_total_limit: plan.checkpoints.kept,
    seed: DEFAULT_SEED,
    report_to: 'none',
    use_cpu: s.device === 'cpu',
  }
  // TrainingArguments raises on tf32=True below Ampere, so the field is written only where it can apply.
  if (isAmpereOrNewer(planDevice(plan))) args.tf32 = s.tf32
  if (s.compile.enabled) args.torch_compile_mode = s.compile.mode
  if (s.dataloader.prefetchFactor !== null && s.dataloader.workers > 0) {
    args.dataloader_prefetch_factor = s.dataloader.prefetchFactor
  }
  // RCCL is exposed to PyTorch under the nccl backend name.
  const backend = launchBackend(plan)
  if (backend !== 'none') args.ddp_backend = backend === 'gloo' ? 'gloo' : 'nccl'
  if (engine.kind === 'deepspeed') args.deepspeed = DS_CONFIG_FILE
  if (engine.kind === 'fsdp') {
    // FSDP's `offload` moves parameters and gradients to the CPU: only a plan that offloads them gets it.
    // Sharded within a node and replicated across nodes on several (hybrid_shard), as every format shards it.
    const sharding = fsdpShardingStrategy(plan) === 'HYBRID_SHARD' ? 'hybrid_shard' : 'full_shard'
    args.fsdp = [sharding, 'auto_wrap', ...(engine.paramOffload === 'cpu' ? ['offload'] : [])].join(' ')
    const layer = layerClassName(plan.model)
    args.fsdp_config = {
      // Each decoder layer is its own FSDP unit, gathered one at a time as the plan's memory counts.
      ...(layer ? { transformer_layer_cls_to_wrap: [layer] } : {}),
      backward_prefetch: 'backward_pre',
      forward_prefetch: false,
      use_orig_params: true,
      sync_module_states: true,
      cpu_ram_efficient_loading: true,
    }
  }
  return args
}

const ModelArguments = z.strictObject({
  model_name_or_path: z.string().min(1).optional(),
  model_revision: z.string().min(1).optional(),
  config_name: z.string().min(1).optional(),
  dtype: z.enum(['bfloat16', 'float16', 'float32']),
  attn_implementation: z.enum(['eager', 'sdpa', 'flash_attention_2']),
  block_size: z.number().int().positive(),
})

/**
 * run_clm.py's ModelArguments and DataTrainingArguments the plan decides: the model to start from (the base model
 * of a fine-tune, phase A's output for phase B, or the generated config), the dtype it loads in (`loadDtypeName`),
 * and the sequence length (`block_size`).
 */
export function buildModelArguments(plan: TrainingPlan, ctx: FormatContext, hasConfig: boolean) {
  const s = plan.settings
  const args: Pick<
    z.infer<typeof ModelArguments>,
    'model_name_or_path' | 'model_revision' | 'config_name'
  > = {}
  const base = baseModelId(plan)
  if (ctx.resume) args.model_name_or_path = ctx.resume.from
  else if (base) {
    args.model_name_or_path = base
    // A model read from the Hub loads at the commit its numbers came from (or the revision asked for).
    const hub = plan.model.hub
    if (hub) args.model_revision = hub.commit ?? hub.revision
  } else if (hasConfig) args.config_name = HF_MODEL_CONFIG_FILE
  return {
    ...args,
    dtype: loadDtypeName(plan),
    // from_pretrained's keyword for the attention kernel the plan prices.
    attn_implementation: ATTN_IMPLEMENTATION[s.attention],
    block_size: s.seq,
  }
}

/** Model config fields by architecture: GPT-2 (learned positions, LayerNorm, GELU) and Llama (RoPE, RMSNorm, SwiGLU). */
const GptConfig = z.strictObject({
  architectures: z.tuple([z.literal('GPT2LMHeadModel')]),
  model_type: z.literal('gpt2'),
  vocab_size: z.number().int().positive(),
  n_positions: z.number().int().positive(),
  n_embd: z.number().int().positive(),
  n_layer: z.number().int().positive(),
  n_head: z.number().int().positive(),
  n_inner: z.number().int().positive(),
  activation_function: z.literal('gelu_new'),
  tie_word_embeddings: z.boolean(),
})
const LlamaConfig = z.strictObject({
  architectures: z.tuple([z.literal('LlamaForCausalLM')]),
  model_type: z.literal('llama'),
  vocab_size: z.number().int().positive(),
  max_position_embeddings: z.number().int().positive(),
  hidden_size: z.number().int().positive(),
  intermediate_size: z.number().int().positive(),
  num_hidden_layers: z.number().int().positive(),
  num_attention_heads: z.number().int().positive(),
  num_key_value_heads: z.number().int().positive(),
  head_dim: z.number().int().positive(),
  hidden_act: z.literal('silu'),
  rms_norm_eps: z.number().positive(),
  tie_word_embeddings: z.boolean(),
  attention_bias: z.boolean(),
})

/** An HF model config for a generated model, or null when the shape matches neither GPT-2 nor Llama. */
export function buildModelConfig(model: ModelSpec): Record<string, unknown> | null {
  if (
    model.positions === 'learned' &&
    model.norm === 'layernorm' &&
    model.mlp === 'gelu' &&
    model.kvHeads === model.heads
  ) {
    return {
      architectures: ['GPT2LMHeadModel'],
      model_type: 'gpt2',
      vocab_size: model.vocab,
      n_positions: model.maxPositions,
      n_embd: model.hidden,
      n_layer: model.layers,
      n_head: model.heads,
      n_inner: model.ffn,
      activation_function: 'gelu_new',
      tie_word_embeddings: model.tiedEmbeddings,
    }
  }
  if (model.positions === 'rope' && model.norm === 'rmsnorm' && model.mlp === 'swiglu') {
    return {
      architectures: ['LlamaForCausalLM'],
      model_type: 'llama',
      vocab_size: model.vocab,
      max_position_embeddings: model.maxPositions,
      hidden_size: model.hidden,
      intermediate_size: model.ffn,
      num_hidden_layers: model.layers,
      num_attention_heads: model.heads,
      num_key_value_heads: model.kvHeads,
      head_dim: model.headDim,
      hidden_act: 'silu',
      rms_norm_eps: 1e-5,
      tie_word_embeddings: model.tiedEmbeddings,
      attention_bias: model.bias !== 'none',
    }
  }
  return null
}

export const hfFormat: Exporter = {
  name: 'hf',
  description:
    'Hugging Face TrainingArguments JSON, run_clm model/data arguments, model config, DeepSpeed config for ZeRO plans, PEFT adapter and bitsandbytes configs for LoRA/QLoRA',
  unsupportedReason: () => null,
  render(plan, ctx) {
    const engine: Engine = engineOf(plan)
    warnFsdpAsZero3(engine, ctx.warn)
    warnNvmePath(engine, ctx.warn)
    const files: ExportFile[] = [textFile(HF_ARGS_FILE, jsonDocument(buildTrainingArguments(plan, ctx)))]
    let hasConfig = false
    // Pretraining starts from a config, not weights: the generated shape, or the architecture asked for.
    if (plan.model.source === 'generated' || plan.workload.kind === 'pretrain') {
      const config = buildModelConfig(plan.model)
      hasConfig = config !== null
      if (config) files.push(textFile(HF_MODEL_CONFIG_FILE, jsonDocument(config)))
      else
        ctx.warn(
          'hf-model-config',
          `No HF model config is written: ${plan.model.name} matches neither the GPT-2 nor the Llama layout.`,
        )
    }
    files.push(textFile(HF_MODEL_ARGS_FILE, jsonDocument(buildModelArguments(plan, ctx, hasConfig))))
    if (engine.kind === 'deepspeed')
      files.push(textFile(DS_CONFIG_FILE, jsonDocument(buildDeepSpeedConfig(plan, ctx, 'hf-trainer'))))
    files.push(...methodFiles(plan, engine, ctx.warn))
    return files
  },
  validate(files, plan) {
    const problems = validateStructured(files, HF_ARGS_FILE, 'json', HfTrainingArguments)
    const config = files.find((f) => f.path === HF_MODEL_CONFIG_FILE)
    if (config) {
      const type = (JSON.parse(config.content) as { model_type?: string }).model_type
      problems.push(
        ...validateStructured(
          files,
          HF_MODEL_CONFIG_FILE,
          'json',
          type === 'llama' ? LlamaConfig : GptConfig,
        ),
      )
    }
    if (engineOf(plan).kind === 'deepspeed')
      problems.push(...validateDeepSpeedConfig(files, plan, 'hf-trainer'))
    const modelArgs = validateStructured(files, HF_MODEL_ARGS_FILE, 'json', ModelArguments)
    problems.push(...modelArgs)
    if (modelArgs.length === 0) {
      const parsed = JSON.parse(files.find((f) => f.path === HF_MODEL_ARGS_FILE)?.content ?? '{}')
      if (parsed.block_size !== plan.settings.seq)
        problems.push(
          `${HF_MODEL_ARGS_FILE}: block_size ${parsed.block_size} != sequence ${plan.settings.seq}`,
        )
    }
    const args = JSON.parse(
      files.find((f) => f.path === HF_ARGS_FILE)?.content ?? '{}',
    ) as Partial<HfTrainingArguments>
    if (args.tf32 !== undefined && !isAmpereOrNewer(planDevice(plan)))
      problems.push(`${HF_ARGS_FILE}: tf32 is set on a GPU older than Ampere`)
    return problems
  },
}
