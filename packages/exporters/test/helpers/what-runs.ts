import type { TrainingPlan } from '@rigfit/core'
import { exportPlan } from '../../src/export-plan.js'
import { readPyDict } from '../../src/formats/pytorch.js'
import { parseSbatchDirectives, parseSrunFlags } from '../../src/formats/slurm.js'
import type { ExportFile } from '../../src/types.js'
import { expectedEngine } from './export-fidelity.js'
import { yaml11 } from './read-back.js'
import {
  ACCELERATE_PRECISION,
  DEEPSPEED_PRECISION,
  deepSpeedRemoteEnv,
  deepSpeedWarmupCosine,
  FSDP_SHARDING,
  HF_TRAINER_PRECISION,
  hfCosineWithWarmup,
  LIGHTNING_PRECISION,
  precisionOf,
  type Sharded,
  srunTaskEnv,
  TORCH_BACKENDS,
  type TrainedDtype,
  WRAP_POLICIES,
  type Wrapped,
  ZERO_SHARDING,
} from './tool-behaviour.js'

type Json = Record<string, unknown>

const find = (files: ExportFile[], path: string) => files.find((f) => f.path === path)
const json = (files: ExportFile[], path: string): Json | null => {
  const f = find(files, path)
  return f ? (JSON.parse(f.content) as Json) : null
}

/**
 * The layer class FSDP must wrap for each model type, read from transformers' modeling files (the class the model's
 * `_no_split_modules` names), and the model types whose projections are `Conv1D` (transformers pytorch_utils.Conv1D,
 * used by modeling_gpt2.py), which PEFT adapts with `fan_in_fan_out: true`.
 */
const TRANSFORMERS_LAYERS: Record<string, string> = {
  llama: 'LlamaDecoderLayer',
  mistral: 'MistralDecoderLayer',
  mixtral: 'MixtralDecoderLayer',
  qwen2: 'Qwen2DecoderLayer',
  gemma: 'GemmaDecoderLayer',
  gemma2: 'Gemma2DecoderLayer',
  phi: 'PhiDecoderLayer',
  phi3: 'Phi3DecoderLayer',
  gpt2: 'GPT2Block',
  gpt_bigcode: 'GPTBigCodeBlock',
  gpt_neox: 'GPTNeoXLayer',
  bert: 'BertLayer',
}
const CONV1D_MODEL_TYPES = ['gpt2']
const ATTENTION: Record<string, string> = { eager: 'eager', sdpa: 'sdpa', flash: 'flash_attention_2' }

/** The variables a script exports, by name (values as written, unexpanded). */
function exportsOf(script: string): Record<string, string> {
  const env: Record<string, string> = {}
  for (const m of script.matchAll(/^export (\w+)=(.*)$/gm)) env[m[1] as string] = m[2] as string
  return env
}

/** The example trainer (examples/pytorch): what it trains for a launcher's precision over the bundled plan. */
function trainerPrecision(planned: string, mixedPrecision: string | null): string {
  // rigfit_sources.autocast_precision: `no` keeps a pure-half plan; otherwise the flag's variant (or fp32).
  if (mixedPrecision === null) return planned
  if (mixedPrecision === 'no') return planned.endsWith('-true') ? planned : 'fp32'
  return `${mixedPrecision}-mixed`
}

const loadDtypeOf = (precision: string) =>
  precision.endsWith('-true') ? (precision.startsWith('bf16') ? 'bfloat16' : 'float16') : 'float32'

/** What trains, by format, through the tools' precision tables; null where the format leaves it to the user. */
export function trainedPrecision(format: string, files: ExportFile[], plan: TrainingPlan): string | null {
  const ds = json(files, 'ds_config.json')
  const dsTrained = (d: Json) => precisionOf(DEEPSPEED_PRECISION.trained(d as never))
  const bundled = (json(files, 'rigfit-plan.json')?.settings as Json | undefined)?.precision as
    | string
    | undefined
  switch (format) {
    case 'hf': {
      const args = json(files, 'training_args.json') as Json
      const modelArgs = json(files, 'model_args.json') as Json
      const flags = { bf16: args.bf16 === true, fp16: args.fp16 === true }
      // The Trainer fills DeepSpeed's "auto" precision from its own flags.
      if (ds) return dsTrained({ bf16: { enabled: flags.bf16 }, fp16: { enabled: flags.fp16 } })
      return precisionOf(HF_TRAINER_PRECISION.trained(flags, String(modelArgs.dtype)))
    }
    case 'accelerate': {
      const config = yaml11(files.find((f) => /^accelerate_config.*\.yaml$/.test(f.path))?.content ?? '')
      const mp = String(config.mixed_precision)
      // accelerate's DeepSpeed plugin enables the config's bf16/fp16 from mixed_precision.
      if (config.distributed_type === 'DEEPSPEED')
        return dsTrained({ bf16: { enabled: mp === 'bf16' }, fp16: { enabled: mp === 'fp16' } })
      const resolved = trainerPrecision(bundled ?? plan.settings.precision, mp)
      const t: TrainedDtype = ACCELERATE_PRECISION.trained(mp, loadDtypeOf(resolved))
      return precisionOf(t)
    }
    case 'deepspeed':
      return dsTrained(ds as Json)
    case 'torchrun':
    case 'slurm':
      return ds ? dsTrained(ds) : (bundled ?? null)
    case 'lightning': {
      const t = (yaml11(find(files, 'lightning_config.yaml')?.content ?? '').trainer ?? {}) as Json
      const p = String(t.precision)
      const strategy = t.strategy
      const deepspeed =
        (typeof strategy === 'string' && strategy.startsWith('deepspeed')) ||
        (typeof strategy === 'object' && String((strategy as Json).class_path).endsWith('DeepSpeedStrategy'))
      // Lightning's DeepSpeed precision plugin enables DeepSpeed's bf16 / fp16 for both -mixed and -true.
      if (deepspeed)
        return dsTrained({ bf16: { enabled: p.startsWith('bf16') }, fp16: { enabled: p.startsWith('16') } })
      return precisionOf(LIGHTNING_PRECISION.trained(p))
    }
    default:
      return null
  }
}

const ZERO: Record<number, Sharded['engine']> = { 0: 'ddp', 1: 'zero1', 2: 'zero2', 3: 'zero3' }

/** A ZeRO stage: stage 0 is plain data parallelism, sharding nothing. */
const zeroOf = (stage: number) => ({
  sharded: { engine: ZERO[stage] ?? 'none', over: stage > 0 ? ZERO_SHARDING.over : null },
  wrapped: null,
})

/** What is sharded over which ranks, and what FSDP gathers at once, as the tools read the files. */
export function shardingOf(
  format: string,
  files: ExportFile[],
  plan: TrainingPlan,
): { sharded: Sharded | null; wrapped: Wrapped | null } {
  const ds = json(files, 'ds_config.json')
  const zero = (d: Json) => zeroOf((d.zero_optimization as Json).stage as number)
  const fsdp = (strategy: string, wrapped: Wrapped) => ({
    sharded: { engine: 'fsdp' as const, over: FSDP_SHARDING.over[strategy] ?? null },
    wrapped,
  })
  const layer = TRANSFORMERS_LAYERS[plan.model.modelType] ?? null
  switch (format) {
    case 'hf': {
      if (ds) return zero(ds)
      const args = json(files, 'training_args.json') as Json
      if (!args.fsdp) return { sharded: null, wrapped: null }
      const options = String(args.fsdp).split(' ')
      const strategy = options.map((o) => FSDP_SHARDING.hfOption[o]).find(Boolean) ?? 'FULL_SHARD'
      const classes = (args.fsdp_config as Json | undefined)?.transformer_layer_cls_to_wrap as
        | string[]
        | undefined
      return fsdp(strategy, WRAP_POLICIES.hf(String(args.fsdp), classes, layer))
    }
    case 'accelerate': {
      const config = yaml11(files.find((f) => /^accelerate_config.*\.yaml$/.test(f.path))?.content ?? '')
      if (config.distributed_type === 'DEEPSPEED') {
        const d = config.deepspeed_config as Json
        return zeroOf(d.zero_stage as number)
      }
      if (config.distributed_type === 'FSDP') {
        const f = config.fsdp_config as Json
        return fsdp(
          String(f.fsdp_sharding_strategy),
          WRAP_POLICIES.accelerate(String(f.fsdp_auto_wrap_policy)),
        )
      }
      return {
        sharded: { engine: config.distributed_type === 'NO' ? 'none' : 'ddp', over: null },
        wrapped: null,
      }
    }
    case 'deepspeed':
      return zero(ds as Json)
    case 'torchrun':
    case 'slurm': {
      if (ds) return zero(ds)
      // The example trainer (rigfit_build.py): FSDP per Block, HYBRID_SHARD across nodes.
      if (plan.settings.strategy !== 'fsdp') return { sharded: null, wrapped: null }
      return fsdp(plan.settings.nodes > 1 ? 'HYBRID_SHARD' : 'FULL_SHARD', 'layer')
    }
    case 'lightning': {
      const t = (yaml11(find(files, 'lightning_config.yaml')?.content ?? '').trainer ?? {}) as Json
      const s = t.strategy
      if (typeof s === 'object' && s !== null) {
        const o = s as { class_path: string; init_args: Json }
        if (o.class_path.endsWith('FSDPStrategy')) {
          const policy = o.init_args.auto_wrap_policy as string[] | undefined
          const path = policy?.find((p) => p.endsWith(`.${layer}`)) ?? null
          return fsdp(String(o.init_args.sharding_strategy), WRAP_POLICIES.lightning(policy, path))
        }
        return zeroOf(o.init_args.stage as number)
      }
      const name = String(s)
      if (name === 'fsdp' || name === 'fsdp_cpu_offload')
        return fsdp(FSDP_SHARDING.lightningNamed, WRAP_POLICIES.lightning(undefined, null))
      const stage = /^deepspeed_stage_(\d)/.exec(name)?.[1]
      if (stage) return zeroOf(Number(stage))
      return { sharded: { engine: name === 'ddp' ? 'ddp' : 'none', over: null }, wrapped: null }
    }
    default:
      return { sharded: null, wrapped: null }
  }
}

/** What the plan means: ZeRO over the job, FSDP within a node wrapping each layer, DDP, or one process. */
export function plannedSharding(
  plan: TrainingPlan,
  format: string,
): { sharded: Sharded; wrapped: Wrapped | null } {
  const engine = expectedEngine(plan, format)
  if (engine.kind === 'deepspeed')
    return {
      sharded: { engine: ZERO[engine.stage] ?? 'none', over: engine.stage > 0 ? 'job' : null },
      wrapped: null,
    }
  if (engine.kind === 'fsdp') return { sharded: { engine: 'fsdp', over: 'node' }, wrapped: 'layer' }
  return { sharded: { engine: engine.kind === 'ddp' ? 'ddp' : 'none', over: null }, wrapped: null }
}

/** On one node the job's ranks are the node's: FULL_SHARD and HYBRID_SHARD shard over the same ranks. */
const normalise = (s: Sharded, nodes: number): Sharded =>
  nodes === 1 && s.over !== null ? { ...s, over: 'node' } : s

/** The environment each rank of a multi-node launch sees, by launcher, and whether the plan reaches it. */
function rankEnvProblems(format: string, files: ExportFile[], plan: TrainingPlan): string[] {
  const s = plan.settings
  const out: string[] = []
  const need = (where: string, env: Record<string, string>, planFound: boolean) => {
    if (env.OMP_NUM_THREADS !== String(s.threads))
      out.push(`${where}: OMP_NUM_THREADS is ${env.OMP_NUM_THREADS ?? 'unset'}, plan ${s.threads}`)
    if (!planFound) out.push(`${where}: the rank finds no plan`)
  }
  if (format === 'deepspeed' && s.nodes > 1) {
    const script = find(files, 'launch_deepspeed.sh')?.content ?? ''
    const launchEnv = exportsOf(script)
    const envFile =
      launchEnv.DS_ENV_FILE?.includes('.deepspeed_env') && find(files, '.deepspeed_env')
        ? (find(files, '.deepspeed_env')?.content ?? null)
        : null
    const remote = deepSpeedRemoteEnv(launchEnv, envFile)
    // The example trainer reads --plan, else RIGFIT_PLAN_FILE, else rigfit-plan.json beside --deepspeed_config.
    const beside =
      /--deepspeed_config "\$HERE\/ds_config\.json"/.test(script) && !!find(files, 'rigfit-plan.json')
    need('deepspeed, a rank on node 2', remote, 'RIGFIT_PLAN_FILE' in remote || beside)
  }
  if (format === 'slurm') {
    for (const path of ['train_torchrun.sbatch', 'train_lightning.sbatch']) {
      const script = find(files, path)?.content ?? ''
      const tasks = srunTaskEnv(exportsOf(script), parseSrunFlags(script)?.get('--export') ?? null)
      need(`${path}, an srun task (site default --export=NONE)`, tasks, 'RIGFIT_PLAN_FILE' in tasks)
    }
  }
  return out
}

/** What the format's files run that the plan does not say; empty when what would run is the plan. */
export function behaviourMismatches(
  plan: TrainingPlan,
  format: string,
  files: ExportFile[],
  nodeCpus: number | null,
): string[] {
  const s = plan.settings
  const out: string[] = []
  const same = (what: string, got: unknown, want: unknown) => {
    if (JSON.stringify(got) !== JSON.stringify(want))
      out.push(`${what}: runs ${JSON.stringify(got)}, plan ${JSON.stringify(want)}`)
  }
  // Adapters train in their own dtype (PEFT), so the trained dtype is compared for full training.
  const trained = s.lora === null ? trainedPrecision(format, files, plan) : null
  if (trained !== null) same('trained precision', trained, s.precision)
  const { sharded, wrapped } = shardingOf(format, files, plan)
  const planned = plannedSharding(plan, format)
  if (sharded) same('sharding', normalise(sharded, s.nodes), normalise(planned.sharded, s.nodes))
  if (planned.wrapped && (sharded || wrapped)) same('FSDP wrapping', wrapped, planned.wrapped)
  out.push(...rankEnvProblems(format, files, plan))
  out.push(...methodProblems(plan, format, files))
  out.push(...launchProblems(plan, format, files, nodeCpus))
  return out
}

/** The adapter's Conv1D flag and the attention kernel, where the format states them. */
function methodProblems(plan: TrainingPlan, format: string, files: ExportFile[]): string[] {
  const out: string[] = []
  const adapters: Json[] = []
  const adapter = json(files, 'adapter_config.json')
  if (adapter) adapters.push(adapter)
  const attn: unknown[] = []
  if (format === 'hf') attn.push(json(files, 'model_args.json')?.attn_implementation)
  if (format === 'lightning')
    attn.push(
      (yaml11(find(files, 'lightning_config.yaml')?.content ?? '').model as Json | undefined)
        ?.attn_implementation,
    )
  if (format === 'hydra') {
    const model = yaml11(files[0]?.content ?? '').model as Json
    attn.push(model.attn_implementation)
    if (model.lora) adapters.push(model.lora as Json)
  }
  if (format === 'pytorch') {
    const lora = readPyDict(files[0]?.content ?? '', 'LORA_CONFIG') as Json | null
    if (lora) adapters.push(lora)
  }
  const conv1d = CONV1D_MODEL_TYPES.includes(plan.model.modelType)
  for (const a of adapters)
    if ((a.fan_in_fan_out === true) !== conv1d)
      out.push(`adapter fan_in_fan_out ${a.fan_in_fan_out} on ${plan.model.modelType} (Conv1D: ${conv1d})`)
  for (const a of attn)
    if (a !== ATTENTION[plan.settings.attention])
      out.push(`attn_implementation ${a}, plan attention ${plan.settings.attention}`)
  return out
}

/** Slurm's CPUs against the node's, the process-group backend, and the DeepSpeed schedule against the hf one. */
function launchProblems(
  plan: TrainingPlan,
  format: string,
  files: ExportFile[],
  nodeCpus: number | null,
): string[] {
  const out: string[] = []
  if (format === 'slurm' && nodeCpus !== null) {
    for (const path of ['train_torchrun.sbatch', 'train_lightning.sbatch']) {
      const d = parseSbatchDirectives(find(files, path)?.content ?? '')
      const asked = Number(d.get('--cpus-per-task')) * Number(d.get('--ntasks-per-node'))
      if (!(asked <= nodeCpus)) out.push(`${path}: asks a node for ${asked} CPUs, it has ${nodeCpus}`)
    }
  }
  if (format === 'pytorch') {
    const backend = String((readPyDict(files[0]?.content ?? '', 'SETTINGS') as Json).backend)
    if (backend !== 'none' && !TORCH_BACKENDS.names.includes(backend))
      out.push(`torch.distributed has no backend ${backend}`)
  }
  const scheduler = (json(files, 'ds_config.json')?.scheduler as Json | undefined)?.params as Json | undefined
  if (format === 'deepspeed' && scheduler) {
    const args = json(exportPlan(plan, { format: 'hf' }).files, 'training_args.json') as Json
    const total = args.max_steps as number
    const warmup = args.warmup_steps as number
    // DeepSpeed's cosine counts from the step after warm-up: the curves may differ by one step of the hf curve.
    // Every warm-up step and 400 steps across the run are compared.
    const steps = new Set<number>()
    for (let t = 0; t <= Math.min(total - 1, warmup + 2); t += 1) steps.add(t)
    for (let i = 0; i <= 400; i += 1) steps.add(Math.min(total - 1, Math.round((i / 400) * (total - 1))))
    let step1 = 0
    let worst = 0
    for (const t of steps) {
      const hf = hfCosineWithWarmup(t, warmup, total)
      step1 = Math.max(step1, Math.abs(hfCosineWithWarmup(t + 1, warmup, total) - hf))
      worst = Math.max(worst, Math.abs(deepSpeedWarmupCosine(t, scheduler as never) - hf))
    }
    if (worst > step1 + 1e-9)
      out.push(`DeepSpeed's learning-rate schedule departs from hf's by ${worst.toFixed(4)} of the peak`)
  }
  return out
}
