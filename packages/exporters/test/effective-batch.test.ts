import type { TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { exportPlan } from '../src/export-plan.js'
import { FORMAT_NAMES } from '../src/format-names.js'
import { parseDefconfig } from '../src/formats/kconfig.js'
import { readPyDict } from '../src/formats/pytorch.js'
import { parseSbatchDirectives } from '../src/formats/slurm.js'
import { parseTorchrunFlags } from '../src/formats/torchrun.js'
import { FORMATS } from '../src/registry.js'
import type { ExportFile } from '../src/types.js'
import { FIXTURE_NAMES, loadFixturePlan } from './helpers/build-plan.js'
import { file, json, yaml } from './helpers/targets.js'

interface Factors {
  micro: number
  accum: number
  perNode: number
  nodes: number
}

const bundled = (files: ExportFile[]) => (json(file(files, 'rigfit-plan.json')) as TrainingPlan).settings

/** Reads micro-batch, accumulation, processes per node and nodes back out of each format's own files. */
const extract: Record<string, (files: ExportFile[], plan: TrainingPlan) => Factors> = {
  hf: (files, plan) => {
    const a = json(file(files, 'training_args.json'))
    // TrainingArguments leaves the device count to the launcher; the launchers' factor is tested below.
    return {
      micro: a.per_device_train_batch_size as number,
      accum: a.gradient_accumulation_steps as number,
      perNode: Math.max(plan.settings.gpus, 1),
      nodes: plan.settings.nodes,
    }
  },
  accelerate: (files) => {
    const c = yaml(file(files, '.yaml'))
    const s = bundled(files)
    return {
      micro: s.microBatch,
      accum: s.gradAccum,
      perNode: (c.num_processes as number) / (c.num_machines as number),
      nodes: c.num_machines as number,
    }
  },
  deepspeed: (files) => {
    const c = json(file(files, 'ds_config.json'))
    const world =
      (c.train_batch_size as number) /
      ((c.train_micro_batch_size_per_gpu as number) * (c.gradient_accumulation_steps as number))
    const hosts = files.find((f) => f.path === 'hostfile')
    const slots = hosts
      ? hosts.content
          .trim()
          .split('\n')
          .map((l) => Number(/slots=(\d+)/.exec(l)?.[1]))
      : [world]
    expect(slots.reduce((a, b) => a + b, 0)).toBe(world)
    return {
      micro: c.train_micro_batch_size_per_gpu as number,
      accum: c.gradient_accumulation_steps as number,
      perNode: slots[0] as number,
      nodes: slots.length,
    }
  },
  torchrun: (files) => {
    const flags = parseTorchrunFlags(file(files, 'launch_torchrun.sh').content)
    const s = bundled(files)
    return {
      micro: s.microBatch,
      accum: s.gradAccum,
      perNode: Number(flags?.get('--nproc-per-node')),
      nodes: Number(flags?.get('--nnodes')),
    }
  },
  slurm: (files) => {
    const lightning = parseSbatchDirectives(file(files, 'train_lightning.sbatch').content)
    const torchrun = parseTorchrunFlags(file(files, 'train_torchrun.sbatch').content)
    const s = bundled(files)
    expect(Number(torchrun?.get('--nproc-per-node'))).toBe(Number(lightning.get('--ntasks-per-node')))
    return {
      micro: s.microBatch,
      accum: s.gradAccum,
      perNode: Number(lightning.get('--ntasks-per-node')),
      nodes: Number(lightning.get('--nodes')),
    }
  },
  lightning: (files) => {
    const c = yaml(file(files, 'lightning_config.yaml')) as {
      trainer: Record<string, number>
      data: Record<string, number>
    }
    return {
      micro: c.data.batch_size as number,
      accum: c.trainer.accumulate_grad_batches as number,
      perNode: c.trainer.devices as number,
      nodes: c.trainer.num_nodes as number,
    }
  },
  hydra: (files, plan) => {
    const g = yaml(files[0] as ExportFile) as {
      training: { batch_size: number }
      optimization: { gradient_accumulation_steps: number }
    }
    const stated =
      /Effective batch (\d+) = batch_size (\d+) x accumulation (\d+) x (\d+) GPU\(s\) x (\d+) node/.exec(
        (files[0] as ExportFile).content,
      )
    expect(Number(stated?.[1])).toBe(plan.settings.effectiveBatch)
    return {
      micro: g.training.batch_size,
      accum: g.optimization.gradient_accumulation_steps,
      perNode: Number(stated?.[4]),
      nodes: Number(stated?.[5]),
    }
  },
  kconfig: (files, plan) => {
    const v = parseDefconfig((files[0] as ExportFile).content)
    const micro = Number(v.get('CONFIG_BATCH_SIZE'))
    const target = Number(v.get('CONFIG_TARGET_EFFECTIVE_BATCH'))
    const world = Math.max(plan.settings.gpus, 1) * plan.settings.nodes
    // The defconfig pins batch size and target; the trainer derives accumulation = target / (batch x GPUs).
    return {
      micro,
      accum: target / (micro * world),
      perNode: Math.max(plan.settings.gpus, 1),
      nodes: plan.settings.nodes,
    }
  },
  pytorch: (files) => {
    const s = readPyDict(file(files, 'rigfit_settings.py').content, 'SETTINGS') as Record<string, number>
    return {
      micro: s.micro_batch as number,
      accum: s.grad_accum as number,
      perNode: s.world_size as number,
      nodes: 1,
    }
  },
  rigfit: (files) => {
    const s = bundled(files)
    return { micro: s.microBatch, accum: s.gradAccum, perNode: Math.max(s.gpus, 1), nodes: s.nodes }
  },
}

const cases = FIXTURE_NAMES.flatMap((name) => [1, 3].map((nodes) => [name, nodes] as const))

describe('effective batch = micro-batch x accumulation x GPUs x nodes, in every format', () => {
  it('every format has an extractor', () => {
    expect(Object.keys(extract).sort()).toEqual([...FORMAT_NAMES].sort())
  })

  it.each(cases)('%s on %i node(s)', (name, nodes) => {
    const base = loadFixturePlan(name)
    if (base.settings.device === 'mps' && nodes > 1) return
    const checked: string[] = []
    for (const format of FORMAT_NAMES) {
      const result = (() => {
        try {
          return exportPlan(base, { format, nodes: nodes === 1 ? null : nodes })
        } catch (error) {
          expect(FORMATS[format].unsupportedReason(base)).not.toBeNull()
          expect((error as { code: string }).code).toBe('E_FORMAT_UNSUPPORTED')
          return null
        }
      })()
      if (!result) continue
      const f = (extract[format] as (typeof extract)[string])(result.files, result.plan)
      expect(f.micro * f.accum * f.perNode * f.nodes, format).toBe(result.plan.settings.effectiveBatch)
      checked.push(format)
    }
    expect(checked).toContain('rigfit')
    expect(checked.length).toBeGreaterThanOrEqual(base.settings.device === 'cuda' ? 10 : 6)
  })
})
