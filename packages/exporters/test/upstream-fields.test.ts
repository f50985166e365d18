import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { TrainingPlan } from '@rigfit/core'
import { beforeAll, describe, expect, it } from 'vitest'
import { exportPlan } from '../src/export-plan.js'
import { FORMAT_NAMES } from '../src/format-names.js'
import { parseDefconfig } from '../src/formats/kconfig.js'
import { readPyDict } from '../src/formats/pytorch.js'
import { parseSbatchDirectives, parseSrunFlags } from '../src/formats/slurm.js'
import { parseTorchrunFlags } from '../src/formats/torchrun.js'
import { FORMATS } from '../src/registry.js'
import { parseCommandFlags } from '../src/shell-flags.js'
import type { ExportFile } from '../src/types.js'
import { type SweptPlan, sweepPlans } from './helpers/planner-plan.js'
import { yaml11 } from './helpers/read-back.js'
import { keysOf, unknownTo, upstream } from './helpers/upstream.js'

type Json = Record<string, unknown>

const transformers = upstream('transformers')
const peft = upstream('peft')
const accelerate = upstream('accelerate')
const deepspeed = upstream('deepspeed')
const lightning = upstream('lightning')
const torch = upstream('torch')
const slurm = upstream('slurm')
const target = (name: string) =>
  readFileSync(fileURLToPath(new URL(`./fixtures/targets/${name}`, import.meta.url)), 'utf8')
const modelConfigs = JSON.parse(target('hf-model-configs.json')) as Record<string, string[]>
const kconfigSymbols = JSON.parse(target('kconfig-symbols.json')) as string[]

const find = (files: ExportFile[], path: string) => files.find((f) => f.path === path)
const jsonOf = (files: ExportFile[], path: string) => {
  const f = find(files, path)
  return f ? (JSON.parse(f.content) as Json) : null
}

/** Collects every problem so one failure lists all unknown names of a plan. */
class Problems {
  readonly list: string[] = []
  keys(where: string, list: unknown[] | undefined, value: unknown) {
    for (const k of unknownTo(list, keysOf(value))) this.list.push(`${where}: unknown key ${String(k)}`)
  }
  value(where: string, list: unknown[] | undefined, value: unknown) {
    if (value !== undefined && !(list ?? []).includes(value))
      this.list.push(`${where}: unknown value ${String(value)}`)
  }
  flags(where: string, list: unknown[] | undefined, flags: Map<string, string> | null) {
    if (!flags) return this.list.push(`${where}: command not found`)
    for (const f of unknownTo(list, [...flags.keys()])) this.list.push(`${where}: unknown flag ${String(f)}`)
  }
}

/** Leaf paths (a.b.c) whose value is "auto". */
function autoPaths(value: unknown, prefix = ''): string[] {
  if (value === 'auto') return [prefix]
  if (!value || typeof value !== 'object' || Array.isArray(value)) return []
  return Object.entries(value).flatMap(([k, v]) => autoPaths(v, prefix ? `${prefix}.${k}` : k))
}

function checkDeepSpeed(p: Problems, ds: Json | null, hfTrainer: boolean) {
  if (!ds) return
  p.keys('ds_config', deepspeed.top, ds)
  const zero = ds.zero_optimization as Json
  p.keys('zero_optimization', deepspeed.zero_optimization, zero)
  for (const [key, list] of [
    ['offload_optimizer', deepspeed.offload_optimizer],
    ['offload_param', deepspeed.offload_param],
  ] as const) {
    p.keys(key, list, zero[key])
    p.value(`${key}.device`, deepspeed.offload_device, (zero[key] as Json | undefined)?.device)
  }
  p.keys('bf16', deepspeed.bf16, ds.bf16)
  p.keys('fp16', deepspeed.fp16, ds.fp16)
  const optimizer = ds.optimizer as { type: string; params: Json } | undefined
  if (optimizer) {
    p.value('optimizer.type', deepspeed.optimizer_types, optimizer.type.toLowerCase())
    p.keys('optimizer.params', deepspeed.optimizer_params, optimizer.params)
  }
  const scheduler = ds.scheduler as { type: string; params: Json } | undefined
  if (scheduler) {
    p.value('scheduler.type', deepspeed.scheduler_types, scheduler.type)
    p.keys('scheduler.params', deepspeed[scheduler.type], scheduler.params)
  }
  const autos = autoPaths(ds)
  if (!hfTrainer && autos.length > 0)
    p.list.push(`ds_config: "auto" outside the HF Trainer: ${autos.join(', ')}`)
  for (const path of unknownTo(transformers.deepspeed_auto, autos))
    p.list.push(`ds_config: the HF Trainer does not fill "auto" at ${String(path)}`)
}

function checkMethodFiles(p: Problems, files: ExportFile[]) {
  const adapter = jsonOf(files, 'adapter_config.json')
  if (adapter) {
    p.keys('adapter_config', peft.lora_config, adapter)
    p.value('peft_type', peft.peft_type, adapter.peft_type)
    p.value('task_type', peft.task_type, adapter.task_type)
    p.value('bias', peft.bias, adapter.bias)
  }
  checkQuantization(p, jsonOf(files, 'quantization_config.json'))
}

function checkQuantization(p: Problems, q: Json | null) {
  if (!q) return
  p.keys('quantization_config', transformers.bitsandbytes_config, q)
  p.value('bnb_4bit_quant_type', transformers.bnb_4bit_quant_type, q.bnb_4bit_quant_type)
  p.value('bnb_4bit_compute_dtype', transformers.bnb_4bit_compute_dtype, q.bnb_4bit_compute_dtype)
  p.value('bnb_4bit_quant_storage', transformers.bnb_4bit_quant_storage, q.bnb_4bit_quant_storage)
}

/** torchrun flags every supported torch release takes: the ones torch 1.13 and torch 2.x both know. */
function checkTorchrun(p: Problems, where: string, script: string) {
  const flags = parseTorchrunFlags(script)
  p.flags(`${where} (torch 1.13)`, torch.torchrun_1_13, flags)
  p.flags(`${where} (torch 2.x)`, torch.torchrun_2, flags)
}

const CHECKS: Record<string, (p: Problems, files: ExportFile[]) => void> = {
  hf(p, files) {
    const args = jsonOf(files, 'training_args.json') as Json
    p.keys('training_args', transformers.training_arguments, args)
    p.value('optim', transformers.optim, args.optim)
    p.value('lr_scheduler_type', transformers.lr_scheduler_type, args.lr_scheduler_type)
    p.value('save_strategy', transformers.save_strategy, args.save_strategy)
    p.value('torch_compile_mode', transformers.torch_compile_mode, args.torch_compile_mode)
    p.value('ddp_backend', transformers.ddp_backend, args.ddp_backend)
    for (const option of String(args.fsdp ?? '')
      .split(' ')
      .filter(Boolean))
      p.value('fsdp', transformers.fsdp_options, option)
    p.keys('fsdp_config', transformers.fsdp_config, args.fsdp_config)
    p.value(
      'backward_prefetch',
      transformers.fsdp_backward_prefetch,
      (args.fsdp_config as Json | undefined)?.backward_prefetch,
    )
    const modelArgs = jsonOf(files, 'model_args.json')
    // run_clm.py's arguments, and from_pretrained's attn_implementation, which a loader passes through.
    p.keys(
      'model_args',
      [...(transformers.run_clm_arguments ?? []), ...(transformers.from_pretrained_kwargs ?? [])],
      modelArgs,
    )
    p.value(
      'model_args.attn_implementation',
      transformers.attn_implementation,
      modelArgs?.attn_implementation,
    )
    p.value('model_args.dtype', transformers.run_clm_dtype, modelArgs?.dtype)
    const config = jsonOf(files, 'config.json')
    if (config) p.keys('config.json', modelConfigs[String(config.model_type)], config)
    checkDeepSpeed(p, jsonOf(files, 'ds_config.json'), true)
    checkMethodFiles(p, files)
  },
  accelerate(p, files) {
    for (const f of files.filter((x) => /accelerate_config.*\.yaml$/.test(x.path))) {
      const c = yaml11(f.content)
      p.keys(f.path, accelerate.top, c)
      for (const key of [
        'compute_environment',
        'distributed_type',
        'mixed_precision',
        'rdzv_backend',
        'downcast_bf16',
      ])
        p.value(`${f.path} ${key}`, accelerate[key], c[key])
      const ds = c.deepspeed_config as Json | undefined
      p.keys('deepspeed_config', accelerate.deepspeed_config, ds)
      p.value('zero_stage', accelerate.zero_stage, ds?.zero_stage)
      p.value('offload_optimizer_device', accelerate.offload_device, ds?.offload_optimizer_device)
      p.value('offload_param_device', accelerate.offload_device, ds?.offload_param_device)
      p.value(
        'deepspeed_multinode_launcher',
        accelerate.deepspeed_multinode_launcher,
        ds?.deepspeed_multinode_launcher,
      )
      const fsdp = c.fsdp_config as Json | undefined
      p.keys('fsdp_config', accelerate.fsdp_config, fsdp)
      for (const key of [
        'fsdp_sharding_strategy',
        'fsdp_auto_wrap_policy',
        'fsdp_backward_prefetch',
        'fsdp_state_dict_type',
      ])
        p.value(key, accelerate[key], fsdp?.[key])
      const dynamo = c.dynamo_config as Json | undefined
      p.keys('dynamo_config', accelerate.dynamo_config, dynamo)
      p.value('dynamo_backend', accelerate.dynamo_backend, dynamo?.dynamo_backend)
      p.value('dynamo_mode', accelerate.dynamo_mode, dynamo?.dynamo_mode)
    }
    p.flags(
      'accelerate launch',
      accelerate.launch_flags,
      parseCommandFlags(find(files, 'launch_accelerate.sh')?.content ?? '', 'accelerate launch'),
    )
    checkMethodFiles(p, files)
  },
  deepspeed(p, files) {
    checkDeepSpeed(p, jsonOf(files, 'ds_config.json'), false)
    checkMethodFiles(p, files)
  },
  torchrun(p, files) {
    checkTorchrun(p, 'launch_torchrun.sh', find(files, 'launch_torchrun.sh')?.content ?? '')
    checkDeepSpeed(p, jsonOf(files, 'ds_config.json'), false)
    checkMethodFiles(p, files)
  },
  slurm(p, files) {
    for (const f of files.filter((x) => x.path.endsWith('.sbatch'))) {
      p.flags(`${f.path} #SBATCH`, slurm.sbatch, parseSbatchDirectives(f.content))
      p.flags(`${f.path} srun`, slurm.srun, parseSrunFlags(f.content))
    }
    checkTorchrun(p, 'train_torchrun.sbatch', find(files, 'train_torchrun.sbatch')?.content ?? '')
    checkDeepSpeed(p, jsonOf(files, 'ds_config.json'), false)
    checkMethodFiles(p, files)
  },
  lightning(p, files) {
    const c = yaml11(find(files, 'lightning_config.yaml')?.content ?? '')
    p.keys('lightning_config', lightning.cli_top_level, c)
    const t = c.trainer as Json
    p.keys('trainer', lightning.trainer, t)
    p.value('precision', lightning.precision, t.precision)
    p.value('accelerator', lightning.accelerators, t.accelerator)
    if (typeof t.strategy === 'string') p.value('strategy', lightning.strategies, t.strategy)
    else {
      const s = t.strategy as { class_path: string; init_args: Json }
      p.value('strategy.class_path', lightning.strategy_classes, s.class_path)
      if (s.class_path.endsWith('FSDPStrategy')) {
        p.keys('strategy.init_args', lightning.fsdp_strategy, s.init_args)
        p.value('sharding_strategy', lightning.fsdp_sharding_strategy, s.init_args.sharding_strategy)
      } else p.keys('strategy.init_args', lightning.deepspeed_strategy, s.init_args)
    }
    for (const cb of t.callbacks as Array<{ class_path: string; init_args: Json }>) {
      p.value('callback', lightning.callback_classes, cb.class_path)
      p.keys('ModelCheckpoint', lightning.model_checkpoint, cb.init_args)
    }
    checkMethodFiles(p, files)
  },
  hydra(p, files) {
    const group = yaml11(files[0]?.content ?? '')
    const model = group.model as Json
    p.keys('model.lora', peft.lora_config, model.lora)
    checkQuantization(p, (model.quantization as Json | undefined) ?? null)
  },
  kconfig(p, files) {
    const symbols = [...parseDefconfig(files[0]?.content ?? '').keys()]
    for (const s of unknownTo(kconfigSymbols, symbols)) p.list.push(`defconfig: unknown symbol ${String(s)}`)
  },
  pytorch(p, files) {
    const source = files[0]?.content ?? ''
    p.keys('DATALOADER_KWARGS', torch.dataloader, readPyDict(source, 'DATALOADER_KWARGS'))
    p.keys('LORA_CONFIG', peft.lora_config, readPyDict(source, 'LORA_CONFIG'))
    checkQuantization(p, readPyDict(source, 'QUANTIZATION_CONFIG') as Json | null)
  },
  rigfit() {},
}

function exported(plan: TrainingPlan, format: string, meta = false): ExportFile[] | null {
  if (FORMATS[format as keyof typeof FORMATS].unsupportedReason(plan) !== null) return null
  return exportPlan(plan, { format, meta }).files
}

describe('every key and value written is one the real tool defines', () => {
  let plans: SweptPlan[] = []
  beforeAll(async () => {
    plans = await sweepPlans()
  })

  it('has a check for every format and sweeps many plans', () => {
    expect(Object.keys(CHECKS).sort()).toEqual([...FORMAT_NAMES].sort())
    expect(plans.length).toBeGreaterThan(300)
  })

  it.each(FORMAT_NAMES.filter((f) => f !== 'rigfit'))('%s, over every swept plan', (format) => {
    const failures: string[] = []
    let checked = 0
    for (const { label, plan } of plans) {
      const files = exported(plan, format)
      if (!files) continue
      const p = new Problems()
      CHECKS[format]?.(p, files)
      checked += 1
      if (p.list.length > 0) failures.push(`${label}: ${p.list.join('; ')}`)
    }
    expect(failures.slice(0, 5)).toEqual([])
    expect(checked).toBeGreaterThan(100)
  })

  it.each(['hf', 'lightning', 'accelerate', 'deepspeed'])(
    '%s meta-configs use known keys in both phases',
    (format) => {
      const failures: string[] = []
      for (const { label, plan } of plans.filter((x) => x.plan.settings.seq >= 512).slice(0, 40)) {
        const files = exported(plan, format, true)
        if (!files) continue
        for (const phase of ['phase-a', 'phase-b']) {
          const p = new Problems()
          CHECKS[format]?.(
            p,
            files
              .filter((f) => f.path.startsWith(`${phase}/`))
              .map((f) => ({ ...f, path: f.path.slice(phase.length + 1) })),
          )
          if (p.list.length > 0) failures.push(`${label} ${phase}: ${p.list.join('; ')}`)
        }
      }
      expect(failures.slice(0, 5)).toEqual([])
    },
  )

  it('records the upstream version of every list', () => {
    for (const tool of ['transformers', 'peft', 'accelerate', 'deepspeed', 'lightning', 'torch', 'slurm'])
      expect(upstream(tool).upstream.version).toMatch(/\d/)
  })
})
