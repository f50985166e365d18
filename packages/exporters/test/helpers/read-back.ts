import { parse } from 'yaml'
import { parseDefconfig } from '../../src/formats/kconfig.js'
import { readPyDict } from '../../src/formats/pytorch.js'
import { parseSbatchDirectives } from '../../src/formats/slurm.js'
import { parseCommandFlags } from '../../src/shell-flags.js'
import type { ExportFile } from '../../src/types.js'

/**
 * What a set of exported files says about the run, read back the way the target tool reads them (JSON, YAML
 * 1.1, shell flags, Python literals, defconfig lines), independent of the plan object. Null where the format
 * does not state a fact.
 */
export interface ExportedFacts {
  microBatch: number | null
  gradAccum: number | null
  worldSize: number | null
  seq: number | null
  half: 'bf16' | 'fp16' | null | undefined
  /** The exact precision where the format states it (Lightning, Hydra, the settings module, the plan). */
  precision: string | null
  /** How the job is distributed, in the framework's terms (DeepSpeed stage, FSDP, DDP) and offload devices. */
  engine: { kind: string; stage: number; optimizer: string; params: string } | null
  /** How the job is distributed, in the plan's own terms, where the format states those. */
  layout: { strategy: string; sharding: string; offload: string } | null
  lora: { r: number; alpha: number | null; dropout: number | null; targets: string[] | string | null } | null
  quant: { type: string; computeDtype: string | null; doubleQuant: boolean | null } | null
  baseModel: string | null
  /** The dtype the model loads in, where the format states it. */
  loadDtype: string | null
}

type Json = Record<string, unknown>

const find = (files: ExportFile[], path: string) => files.find((f) => f.path === path)
const json = (files: ExportFile[], path: string): Json | null => {
  const f = find(files, path)
  return f ? (JSON.parse(f.content) as Json) : null
}
export const yaml11 = (text: string) => parse(text, { version: '1.1' }) as Json

const halfOf = (precision: string): 'bf16' | 'fp16' | null =>
  precision.startsWith('bf16')
    ? 'bf16'
    : precision.startsWith('fp16') || precision.startsWith('16')
      ? 'fp16'
      : null

function loraFromPeft(config: Json | null): ExportedFacts['lora'] {
  if (!config) return null
  return {
    r: config.r as number,
    alpha: config.lora_alpha as number,
    dropout: config.lora_dropout as number,
    targets: config.target_modules as string[] | string,
  }
}

function quantFromBnb(config: Json | null): ExportedFacts['quant'] {
  if (!config) return null
  if (config.load_in_8bit === true) return { type: 'int8', computeDtype: null, doubleQuant: null }
  return {
    type: config.bnb_4bit_quant_type as string,
    computeDtype: (config.bnb_4bit_compute_dtype as string) ?? null,
    doubleQuant: (config.bnb_4bit_use_double_quant as boolean) ?? null,
  }
}

function engineFromDeepSpeed(ds: Json): ExportedFacts['engine'] {
  const zero = ds.zero_optimization as Json
  const device = (key: string) => ((zero[key] as Json | undefined)?.device as string | undefined) ?? 'none'
  return {
    kind: 'deepspeed',
    stage: zero.stage as number,
    optimizer: device('offload_optimizer'),
    params: device('offload_param'),
  }
}

const NO_ENGINE = (kind: string) => ({ kind, stage: 0, optimizer: 'none', params: 'none' })

/** The plan a launcher format bundles, read as the training script reads it. */
function fromPlanFile(files: ExportFile[]): Partial<ExportedFacts> {
  const plan = json(files, 'rigfit-plan.json')
  if (!plan) return {}
  const s = plan.settings as Json
  const lora = s.lora as { rank: number } | null
  return {
    microBatch: s.microBatch as number,
    gradAccum: s.gradAccum as number,
    seq: s.seq as number,
    precision: s.precision as string,
    half: halfOf(s.precision as string),
    baseModel: (plan.workload as Json).kind === 'finetune' ? ((plan.model as Json).name as string) : null,
    lora: lora ? { r: lora.rank, alpha: null, dropout: null, targets: null } : null,
    layout: { strategy: String(s.strategy), sharding: String(s.sharding), offload: String(s.offload) },
  }
}

/** The PEFT and bitsandbytes configs; the adapter's base model only where an adapter config exists. */
function methodFiles(files: ExportFile[]): Partial<ExportedFacts> {
  const adapter = json(files, 'adapter_config.json')
  const facts: Partial<ExportedFacts> = {
    lora: loraFromPeft(adapter),
    quant: quantFromBnb(json(files, 'quantization_config.json')),
  }
  if (adapter) facts.baseModel = (adapter.base_model_name_or_path as string | null) ?? null
  return facts
}

const EMPTY: ExportedFacts = {
  microBatch: null,
  gradAccum: null,
  worldSize: null,
  seq: null,
  half: undefined,
  precision: null,
  engine: null,
  layout: null,
  lora: null,
  quant: null,
  baseModel: null,
  loadDtype: null,
}

const halfOfDtype = (dtype: unknown) => (dtype === 'bfloat16' ? 'bf16' : dtype === 'float16' ? 'fp16' : null)
const adapterless = (files: ExportFile[]) => !find(files, 'adapter_config.json')

function readHf(files: ExportFile[]): ExportedFacts {
  const args = json(files, 'training_args.json') as Json
  const modelArgs = json(files, 'model_args.json') as Json
  const ds = json(files, 'ds_config.json')
  const fsdp = args.fsdp as string | undefined
  const engine = ds
    ? engineFromDeepSpeed(ds)
    : fsdp
      ? {
          kind: 'fsdp',
          stage: 0,
          optimizer: fsdp.includes('offload') ? 'cpu' : 'none',
          params: fsdp.includes('offload') ? 'cpu' : 'none',
        }
      : null
  const method = methodFiles(files)
  return {
    ...EMPTY,
    microBatch: args.per_device_train_batch_size as number,
    gradAccum: args.gradient_accumulation_steps as number,
    seq: modelArgs.block_size as number,
    // With both flags off, weights loaded in a half type train in it (pure half); adapters load a frozen base.
    half: args.bf16 ? 'bf16' : args.fp16 ? 'fp16' : adapterless(files) ? halfOfDtype(modelArgs.dtype) : null,
    engine,
    ...method,
    baseModel: (modelArgs.model_name_or_path as string | undefined) ?? method.baseModel ?? null,
    loadDtype: (modelArgs.dtype as string | undefined) ?? null,
  }
}

function readAccelerate(files: ExportFile[]): ExportedFacts {
  const config = yaml11(files.find((f) => /^accelerate_config.*\.yaml$/.test(f.path))?.content ?? '')
  const ds = config.deepspeed_config as Json | undefined
  const fsdp = config.fsdp_config as Json | undefined
  const kind = String(config.distributed_type)
  const engine = ds
    ? {
        kind: 'deepspeed',
        stage: ds.zero_stage as number,
        optimizer: ds.offload_optimizer_device as string,
        params: ds.offload_param_device as string,
      }
    : fsdp
      ? {
          kind: 'fsdp',
          stage: 0,
          optimizer: fsdp.fsdp_offload_params ? 'cpu' : 'none',
          params: fsdp.fsdp_offload_params ? 'cpu' : 'none',
        }
      : NO_ENGINE(kind === 'NO' ? 'local' : 'ddp')
  const mp = config.mixed_precision as string
  const bundled = fromPlanFile(files)
  return {
    ...EMPTY,
    ...fromPlanFile(files),
    worldSize: config.num_processes as number,
    // `no` is no autocast: a pure-half plan's weights stay in the half type the bundled plan says.
    half: mp !== 'no' ? (mp as 'bf16' | 'fp16') : bundled.precision?.endsWith('-true') ? bundled.half : null,
    gradAccum:
      (ds?.gradient_accumulation_steps as number | undefined) ?? fromPlanFile(files).gradAccum ?? null,
    engine,
    ...methodFiles(files),
  }
}

function readDeepSpeed(files: ExportFile[]): ExportedFacts {
  const ds = json(files, 'ds_config.json') as Json
  const micro = ds.train_micro_batch_size_per_gpu as number
  const accum = ds.gradient_accumulation_steps as number
  return {
    ...EMPTY,
    ...fromPlanFile(files),
    microBatch: micro,
    gradAccum: accum,
    worldSize: (ds.train_batch_size as number) / (micro * accum),
    half: ds.bf16 ? 'bf16' : ds.fp16 ? 'fp16' : null,
    engine: engineFromDeepSpeed(ds),
    ...methodFiles(files),
  }
}

function torchrunWorld(script: string): number {
  const flags = parseCommandFlags(script, 'torchrun')
  return Number(flags?.get('--nnodes')) * Number(flags?.get('--nproc_per_node'))
}

function readLauncher(files: ExportFile[], script: string): ExportedFacts {
  const ds = json(files, 'ds_config.json')
  return {
    ...EMPTY,
    ...fromPlanFile(files),
    worldSize: torchrunWorld(find(files, script)?.content ?? ''),
    engine: ds ? engineFromDeepSpeed(ds) : null,
    ...methodFiles(files),
  }
}

function readSlurm(files: ExportFile[]): ExportedFacts {
  const facts = readLauncher(files, 'train_torchrun.sbatch')
  const lightning = parseSbatchDirectives(find(files, 'train_lightning.sbatch')?.content ?? '')
  const perNodeTasks = Number(lightning.get('--ntasks-per-node')) * Number(lightning.get('--nodes'))
  // Both scripts must agree on the world size; a disagreement reads as NaN.
  return { ...facts, worldSize: perNodeTasks === facts.worldSize ? facts.worldSize : Number.NaN }
}

const LIGHTNING_DEEPSPEED: Record<string, [number, string, string]> = {
  deepspeed_stage_1: [1, 'none', 'none'],
  deepspeed_stage_2: [2, 'none', 'none'],
  deepspeed_stage_2_offload: [2, 'cpu', 'none'],
  deepspeed_stage_3: [3, 'none', 'none'],
  deepspeed_stage_3_offload: [3, 'cpu', 'cpu'],
  deepspeed_stage_3_offload_nvme: [3, 'nvme', 'nvme'],
}

function lightningEngine(strategy: unknown): ExportedFacts['engine'] {
  if (typeof strategy === 'object' && strategy !== null) {
    const a = (strategy as { init_args: Json }).init_args
    if (String((strategy as { class_path: string }).class_path).endsWith('FSDPStrategy')) {
      const offload = a.cpu_offload === true ? 'cpu' : 'none'
      return { kind: 'fsdp', stage: 0, optimizer: offload, params: offload }
    }
    return {
      kind: 'deepspeed',
      stage: a.stage as number,
      optimizer: a.offload_optimizer ? (a.offload_optimizer_device as string) : 'none',
      params: a.offload_parameters ? (a.offload_params_device as string) : 'none',
    }
  }
  const name = String(strategy)
  const ds = LIGHTNING_DEEPSPEED[name]
  if (ds) return { kind: 'deepspeed', stage: ds[0], optimizer: ds[1], params: ds[2] }
  if (name === 'fsdp') return NO_ENGINE('fsdp')
  if (name === 'fsdp_cpu_offload') return { kind: 'fsdp', stage: 0, optimizer: 'cpu', params: 'cpu' }
  return NO_ENGINE(name === 'ddp' ? 'ddp' : 'local')
}

const LIGHTNING_PRECISION: Record<string, string> = {
  '32-true': 'fp32',
  '16-mixed': 'fp16-mixed',
  'bf16-mixed': 'bf16-mixed',
  '16-true': 'fp16-true',
  'bf16-true': 'bf16-true',
}

function readLightning(files: ExportFile[]): ExportedFacts {
  const config = yaml11(find(files, 'lightning_config.yaml')?.content ?? '')
  const t = config.trainer as Json
  const data = config.data as Json
  const model = config.model as Json | undefined
  const precision = LIGHTNING_PRECISION[String(t.precision)] ?? `unknown ${t.precision}`
  return {
    ...EMPTY,
    microBatch: data.batch_size as number,
    gradAccum: t.accumulate_grad_batches as number,
    worldSize: (t.devices as number) * (t.num_nodes as number),
    seq: data.block_size as number,
    precision,
    half: halfOf(precision),
    engine: lightningEngine(t.strategy),
    ...methodFiles(files),
    baseModel: (model?.model_name_or_path as string | undefined) ?? null,
    loadDtype: (model?.dtype as string | undefined) ?? null,
  }
}

function readHydra(files: ExportFile[]): ExportedFacts {
  const group = yaml11(files[0]?.content ?? '')
  const model = group.model as Json
  const d = group.distributed as Json
  const precision = String((group.device as Json).precision)
  const quant = model.quantization as Json | undefined
  return {
    ...EMPTY,
    microBatch: (group.training as Json).batch_size as number,
    gradAccum: (group.optimization as Json).gradient_accumulation_steps as number,
    worldSize: (d.devices_per_node as number) * (d.num_nodes as number),
    seq: (group.training as Json).block_size as number,
    precision,
    half: halfOf(precision),
    layout: { strategy: String(d.strategy), sharding: String(d.sharding), offload: String(d.offload) },
    lora: loraFromPeft((model.lora as Json | undefined) ?? null),
    quant: quantFromBnb(quant ?? null),
    baseModel: (model.name_or_path as string | undefined) ?? null,
    loadDtype: (model.dtype as string | undefined) ?? null,
  }
}

function readKconfig(files: ExportFile[]): ExportedFacts {
  const text = files[0]?.content ?? ''
  const values = parseDefconfig(text)
  const seq =
    /^# Sequence length (\d+); precision ([\w-]+); strategy ([\w-]+), sharding (\w+), offload (\w+)\./m.exec(
      text,
    )
  const lora = /^# Method: Q?LoRA r=(\d+) alpha=(\d+) dropout=([\d.]+) on/m.exec(text)
  const shape = /batch (\d+) x accumulation (\d+) x (\d+) GPU\(s\) x (\d+) node\(s\)/.exec(text)
  const quant = /over (\w+) weights/.exec(text)
  return {
    ...EMPTY,
    microBatch: values.has('CONFIG_BATCH_SIZE') ? Number(values.get('CONFIG_BATCH_SIZE')) : null,
    gradAccum: shape ? Number(shape[2]) : null,
    worldSize: shape ? Number(shape[3]) * Number(shape[4]) : null,
    seq: seq ? Number(seq[1]) : null,
    precision: seq?.[2] ?? null,
    half: seq ? halfOf(seq[2] as string) : undefined,
    layout: seq
      ? { strategy: seq[3] as string, sharding: seq[4] as string, offload: seq[5] as string }
      : null,
    lora: lora
      ? { r: Number(lora[1]), alpha: Number(lora[2]), dropout: Number(lora[3]), targets: null }
      : null,
    quant: quant ? { type: quant[1] as string, computeDtype: null, doubleQuant: null } : null,
    baseModel: /^# Method: .* of (\S+); set it/m.exec(text)?.[1] ?? null,
  }
}

function readPytorch(files: ExportFile[]): ExportedFacts {
  const source = files[0]?.content ?? ''
  const s = readPyDict(source, 'SETTINGS') as Json
  const lora = readPyDict(source, 'LORA_CONFIG')
  const quant = readPyDict(source, 'QUANTIZATION_CONFIG')
  return {
    ...EMPTY,
    microBatch: s.micro_batch as number,
    gradAccum: s.grad_accum as number,
    worldSize: s.world_size as number,
    seq: s.seq as number,
    precision: s.precision as string,
    half: halfOf(s.precision as string),
    layout: { strategy: String(s.strategy), sharding: String(s.sharding), offload: String(s.offload) },
    lora: loraFromPeft(lora as Json | null),
    quant: quantFromBnb(quant as Json | null),
    baseModel: (s.model_name_or_path as string | null) ?? null,
    loadDtype: (s.model_dtype as string | undefined) ?? null,
  }
}

/** Reads back what one format's files say. */
export function readBack(format: string, files: ExportFile[]): ExportedFacts {
  switch (format) {
    case 'hf':
      return readHf(files)
    case 'accelerate':
      return readAccelerate(files)
    case 'deepspeed':
      return readDeepSpeed(files)
    case 'torchrun':
      return readLauncher(files, 'launch_torchrun.sh')
    case 'slurm':
      return readSlurm(files)
    case 'lightning':
      return readLightning(files)
    case 'hydra':
      return readHydra(files)
    case 'kconfig':
      return readKconfig(files)
    case 'pytorch':
      return readPytorch(files)
    default: {
      const plan = json(files, 'rigfit-plan.json') as Json
      const s = plan.settings as Json
      return {
        ...EMPTY,
        ...fromPlanFile(files),
        worldSize: Math.max(s.gpus as number, 1) * (s.nodes as number),
        quant: s.quant === 'none' ? null : { type: String(s.quant), computeDtype: null, doubleQuant: null },
      }
    }
  }
}

export { halfOf }
