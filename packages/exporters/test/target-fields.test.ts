import type { TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { exportPlan } from '../src/export-plan.js'
import { parseDefconfig } from '../src/formats/kconfig.js'
import { readPyDict } from '../src/formats/pytorch.js'
import { parseSbatchDirectives } from '../src/formats/slurm.js'
import { parseTorchrunFlags } from '../src/formats/torchrun.js'
import { FIXTURE_NAMES, loadFixturePlan } from './helpers/build-plan.js'
import { file, json, keysOf, target, undocumented, yaml } from './helpers/targets.js'

const plans = FIXTURE_NAMES.map((name) => [name, loadFixturePlan(name)] as const)
const render = (plan: TrainingPlan, format: string, nodes?: number) =>
  exportPlan(plan, { format, nodes: nodes ?? null }).files

describe('every key written is one the target documents', () => {
  it.each(plans)('hf: %s', (_name, plan) => {
    const files = render(plan, 'hf')
    const args = json(file(files, 'training_args.json'))
    expect(undocumented(keysOf(args), target('hf-training-arguments.json'))).toEqual([])
    expect(args.bf16 && args.fp16).toBe(false)
    const configs = target<Record<string, string[]>>('hf-model-configs.json')
    const config = json(file(files, 'config.json'))
    expect(undocumented(keysOf(config), configs[config.model_type as string] ?? [])).toEqual([])
  })

  it.each(plans)('accelerate: %s', (_name, plan) => {
    const doc = target<Record<string, string[]>>('accelerate-config.json')
    for (const f of render(plan, 'accelerate').filter((x) => x.path.endsWith('.yaml'))) {
      const config = yaml(f)
      expect(undocumented(keysOf(config), doc.top as string[])).toEqual([])
      expect(doc.distributed_type).toContain(config.distributed_type)
      expect(doc.mixed_precision).toContain(config.mixed_precision)
      expect(doc.rdzv_backend).toContain(config.rdzv_backend)
      for (const section of ['deepspeed_config', 'fsdp_config', 'dynamo_config']) {
        expect(undocumented(keysOf(config[section]), doc[section] as string[])).toEqual([])
      }
    }
  })

  it.each(plans.filter(([, p]) => p.settings.device === 'cuda'))('deepspeed: %s', (_name, plan) => {
    const doc = target<Record<string, string[]>>('deepspeed-config.json')
    const config = json(file(render(plan, 'deepspeed'), 'ds_config.json'))
    expect(undocumented(keysOf(config), doc.top as string[])).toEqual([])
    const zero = config.zero_optimization as Record<string, unknown>
    expect(undocumented(keysOf(zero), doc.zero_optimization as string[])).toEqual([])
    expect(undocumented(keysOf(zero.offload_optimizer), doc.offload as string[])).toEqual([])
    expect(undocumented(keysOf(config.fp16), doc.fp16 as string[])).toEqual([])
    expect(undocumented(keysOf(config.bf16), doc.bf16 as string[])).toEqual([])
    const optimizer = config.optimizer as { type: string; params: object }
    expect(doc.optimizer_types).toContain(optimizer.type)
    expect(undocumented(keysOf(optimizer.params), doc.optimizer_params as string[])).toEqual([])
    const scheduler = config.scheduler as { type: string; params: object }
    expect(undocumented(keysOf(scheduler.params), doc[scheduler.type] as string[])).toEqual([])
  })

  it.each(plans.filter(([, p]) => p.settings.device !== 'mps'))('torchrun and slurm: %s', (_name, plan) => {
    const flags = target('torchrun-flags.json')
    for (const script of [
      file(render(plan, 'torchrun'), 'launch_torchrun.sh'),
      file(render(plan, 'slurm'), 'train_torchrun.sbatch'),
    ]) {
      expect(undocumented([...(parseTorchrunFlags(script.content)?.keys() ?? ['(none)'])], flags)).toEqual([])
    }
    for (const f of render(plan, 'slurm').filter((x) => x.path.endsWith('.sbatch'))) {
      expect(
        undocumented([...parseSbatchDirectives(f.content).keys()], target('sbatch-options.json')),
      ).toEqual([])
    }
  })

  it.each(plans)('lightning: %s', (_name, plan) => {
    const doc = target<Record<string, string[]>>('lightning.json')
    const config = yaml(file(render(plan, 'lightning'), 'lightning_config.yaml'))
    expect(undocumented(keysOf(config), doc.cli_top_level as string[])).toEqual([])
    const trainer = config.trainer as Record<string, unknown>
    expect(undocumented(keysOf(trainer), doc.trainer as string[])).toEqual([])
    expect(doc.precision).toContain(trainer.precision)
    expect(doc.accelerators).toContain(trainer.accelerator)
    if (typeof trainer.strategy === 'string') expect(doc.strategies).toContain(trainer.strategy)
    const callback = (trainer.callbacks as Array<{ init_args: object }>)[0]
    expect(undocumented(keysOf(callback?.init_args), doc.model_checkpoint as string[])).toEqual([])
  })

  it.each(plans)('hydra has exactly the keys of gpu_4090.yaml: %s', (_name, plan) => {
    const reference = target<Record<string, object>>('hydra-gpu_4090.yaml')
    const group = yaml(render(plan, 'hydra')[0] as never)
    expect(keysOf(group)).toEqual(keysOf(reference))
    for (const section of keysOf(reference))
      expect(keysOf(group[section])).toEqual(keysOf(reference[section]))
  })

  it.each(plans)('kconfig and pytorch: %s', (_name, plan) => {
    const symbols = [...parseDefconfig((render(plan, 'kconfig')[0] as { content: string }).content).keys()]
    expect(undocumented(symbols, target('kconfig-symbols.json'))).toEqual([])
    const kwargs = readPyDict(
      file(render(plan, 'pytorch'), 'rigfit_settings.py').content,
      'DATALOADER_KWARGS',
    )
    expect(undocumented(keysOf(kwargs), target('dataloader-arguments.json'))).toEqual([])
  })
})

describe('target rules', () => {
  it('hf writes tf32 only on Ampere or newer and never bf16 with fp16', () => {
    const t4 = json(file(render(loadFixturePlan('t4-fp16'), 'hf'), 'training_args.json'))
    expect(t4).not.toHaveProperty('tf32')
    expect([t4.fp16, t4.bf16]).toEqual([true, false])
    const a100 = json(file(render(loadFixturePlan('a100x4-zero2'), 'hf'), 'training_args.json'))
    expect([a100.tf32, a100.bf16, a100.fp16, a100.deepspeed]).toEqual([true, true, false, 'ds_config.json'])
    const cpu = json(file(render(loadFixturePlan('cpu-2core'), 'hf'), 'training_args.json'))
    expect([cpu.use_cpu, cpu.bf16, cpu.fp16, 'dataloader_prefetch_factor' in cpu]).toEqual([
      true,
      false,
      false,
      false,
    ])
  })

  it('deepspeed fp16 carries dynamic loss scaling and offload follows the plan', () => {
    const t4 = json(file(render(loadFixturePlan('t4-fp16'), 'deepspeed'), 'ds_config.json'))
    expect(t4.fp16).toMatchObject({ enabled: true, loss_scale: 0, initial_scale_power: 16 })
    expect(t4).not.toHaveProperty('bf16')
    const base = loadFixturePlan('a100x4-zero2')
    const offloaded = {
      ...base,
      settings: { ...base.settings, sharding: 'zero3' as const, offload: 'all' as const },
    }
    const zero = json(file(render(offloaded, 'deepspeed'), 'ds_config.json')).zero_optimization as Record<
      string,
      unknown
    >
    expect(zero).toMatchObject({
      stage: 3,
      offload_optimizer: { device: 'cpu', pin_memory: true },
      offload_param: { device: 'cpu' },
    })
  })

  it('lightning names the DeepSpeed and FSDP strategies Lightning registers', () => {
    const strategy = (p: TrainingPlan) =>
      (yaml(file(render(p, 'lightning'), 'lightning_config.yaml')).trainer as { strategy: unknown }).strategy
    const a100 = loadFixturePlan('a100x4-zero2')
    expect(strategy(a100)).toBe('deepspeed_stage_2')
    expect(strategy({ ...a100, settings: { ...a100.settings, offload: 'optimizer' } })).toBe(
      'deepspeed_stage_2_offload',
    )
    expect(
      strategy({ ...a100, settings: { ...a100.settings, sharding: 'zero3', offload: 'optimizer' } }),
    ).toMatchObject({ init_args: { stage: 3, offload_optimizer: true, offload_parameters: false } })
    expect(strategy(loadFixturePlan('h100x8-fsdp-2nodes'))).toBe('fsdp')
    expect(strategy(loadFixturePlan('rtx4090-bf16'))).toBe('auto')
  })

  it('accelerate quotes "no" so PyYAML does not read it as false', () => {
    const content = file(render(loadFixturePlan('cpu-2core'), 'accelerate'), 'accelerate_config.yaml').content
    expect(content).toContain('mixed_precision: "no"')
    expect(yaml({ path: 'x', content, executable: false }).downcast_bf16).toBe('no')
  })
})
