import { spawnSync } from 'node:child_process'
import { mkdtemp, readFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { findCatalogModel, type Precision, type TrainingPlan, WORKLOAD_SCHEMA_VERSION } from '@rigfit/core'
import { whatIfProfile } from '@rigfit/profiler'
import { describe, expect, it } from 'vitest'
import { exportPlan } from '../src/export-plan.js'
import { parseSbatchDirectives } from '../src/formats/slurm.js'
import type { ExportFile } from '../src/types.js'
import { writeExportFiles } from '../src/write-files.js'
import { ALL_GPUS, planFor } from './helpers/plan-space.js'
import { yaml11 } from './helpers/read-back.js'
import { BEHAVIOUR_TABLES, deepSpeedRemoteEnv } from './helpers/tool-behaviour.js'
import { behaviourMismatches, shardingOf, trainedPrecision } from './helpers/what-runs.js'

const exampleDir = fileURLToPath(new URL('../../../examples/pytorch/', import.meta.url))
const hasPython = spawnSync('python3', ['--version']).status === 0

interface Ask {
  gpu: string
  gpus: number
  model: string
  method?: 'full' | 'lora' | 'qlora'
  nodes?: number
  precision?: Precision
  /** `--sharding fsdp --offload none` */
  fsdp?: boolean
  /** `--sharding zero2` */
  zero2?: boolean
  cpus?: number
  mode?: 'conservative' | 'balanced' | 'extreme'
}

/** The plan `rigfit plan --gpu G --gpus N --model M ...` makes (every bundled pack), as `rigfit export --mode` uses. */
async function plan(ask: Ask): Promise<TrainingPlan> {
  // As --gpu resolves a name: exact, else the first entry whose name contains it.
  const entry =
    ALL_GPUS.find((g) => g.name === ask.gpu || g.id === ask.gpu) ??
    ALL_GPUS.find((g) => g.name.includes(ask.gpu))
  if (!entry) throw new Error(`no GPU ${ask.gpu}`)
  const profile = whatIfProfile(
    { gpu: entry, gpus: ask.gpus, ...(ask.cpus ? { cpus: ask.cpus } : {}) },
    ALL_GPUS,
  )
  const model = findCatalogModel(ask.model)
  const made = await planFor(
    profile,
    {
      schemaVersion: WORKLOAD_SCHEMA_VERSION,
      kind: 'finetune',
      model: model ?? null,
      method: ask.method ?? 'full',
      frozenModels: [],
      datasetBytes: null,
      timeBudgetHours: null,
      targetEffectiveBatch: null,
      seq: null,
      nodes: ask.nodes ?? 1,
      pins: {
        ...(ask.precision ? { precision: ask.precision } : {}),
        ...(ask.fsdp ? { sharding: 'fsdp' as const, offload: 'none' as const } : {}),
        ...(ask.zero2 ? { sharding: 'zero2' as const } : {}),
      },
    },
    ask.mode ?? 'balanced',
  )
  if (!made) throw new Error(`nothing fits ${JSON.stringify(ask)}`)
  return made
}

const file = (files: ExportFile[], path: string) => files.find((f) => f.path === path)?.content ?? ''
const json = (files: ExportFile[], path: string) => JSON.parse(file(files, path)) as Record<string, unknown>

describe('the behaviour tables', () => {
  it('name the upstream project, version and source of every rule', () => {
    for (const [name, table] of Object.entries(BEHAVIOUR_TABLES)) {
      expect(table.upstream.project, name).not.toBe('')
      expect(table.upstream.version, name).toMatch(/\d/)
      expect(table.upstream.source, name).not.toBe('')
    }
  })
})

describe('1. multi-node DeepSpeed carries the plan and environment to every rank', () => {
  it('writes .deepspeed_env, points DS_ENV_FILE at it, and a rank on node 2 has the threads and the plan', async () => {
    const p = await plan({ gpu: 'A100 80GB', gpus: 8, nodes: 2, model: 'llama-2-70b' })
    const { files, plan: exported } = exportPlan(p, { format: 'deepspeed' })
    expect(file(files, '.deepspeed_env')).toContain(`OMP_NUM_THREADS=${exported.settings.threads}`)
    expect(file(files, 'launch_deepspeed.sh')).toContain('export DS_ENV_FILE="$HERE/.deepspeed_env"')
    expect(behaviourMismatches(exported, 'deepspeed', files, null)).toEqual([])
    // The launching shell's own exports alone reach no other node.
    expect(deepSpeedRemoteEnv({ OMP_NUM_THREADS: '6', RIGFIT_PLAN_FILE: 'x' }, null)).toEqual({})
  })

  it.skipIf(!hasPython)(
    'the example trainer on node 2 finds the plan from the arguments and environment it is given',
    async () => {
      const p = await plan({ gpu: 'A100 80GB', gpus: 8, nodes: 2, model: 'llama-2-70b' })
      const dir = await mkdtemp(join(tmpdir(), 'rigfit-ds-env-'))
      const { files, plan: exported } = exportPlan(p, { format: 'deepspeed' })
      await writeExportFiles(dir, files, { force: false })
      const envFile = await readFile(join(dir, '.deepspeed_env'), 'utf8')
      // What runner.py exports on node 2: the prefixed variables (none here) and the env file's lines.
      const env = deepSpeedRemoteEnv({}, envFile)
      const code = [
        'import json, sys',
        `sys.path.insert(0, ${JSON.stringify(exampleDir)})`,
        'from rigfit_plan import resolve',
        `print(json.dumps(resolve(None, ${JSON.stringify(env)}, ${JSON.stringify(join(dir, 'ds_config.json'))}).to_json()))`,
      ].join('\n')
      const result = spawnSync('python3', ['-c', code], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', PYTHONDONTWRITEBYTECODE: '1' },
      })
      expect(result.stderr).toBe('')
      const cfg = JSON.parse(result.stdout) as Record<string, unknown>
      expect(cfg).toMatchObject({ micro_batch: exported.settings.microBatch, seq: exported.settings.seq })
    },
  )
})

describe('2. pure fp16 full fine-tunes under the HF Trainer', () => {
  it('loads fp16 weights with fp16/bf16 off: no GradScaler over fp16 gradients', async () => {
    const p = await plan({ gpu: 'Tesla T4', gpus: 1, model: 'gpt2', precision: 'fp16-true' })
    expect(p.settings.precision).toBe('fp16-true')
    const { files } = exportPlan(p, { format: 'hf' })
    expect(json(files, 'training_args.json')).toMatchObject({ fp16: false, bf16: false })
    expect(json(files, 'model_args.json').dtype).toBe('float16')
    expect(trainedPrecision('hf', files, p)).toBe('fp16-true')
  })
})

describe('3. pure 16-bit in accelerate and DeepSpeed', () => {
  it('accelerate says mixed_precision no, so the script keeps the half weights without autocast', async () => {
    const p = await plan({ gpu: 'A100 80GB', gpus: 2, model: 'llama-3.2-3b', precision: 'bf16-true' })
    const { files } = exportPlan(p, { format: 'accelerate' })
    const config = yaml11(file(files, 'accelerate_config.yaml'))
    expect(config.mixed_precision).toBe('no')
    expect(trainedPrecision('accelerate', files, p)).toBe('bf16-true')
  })

  it('DeepSpeed keeps fp32 master weights: the export is the mixed plan, its memory counts them', async () => {
    const p = await plan({ gpu: 'A100 80GB', gpus: 2, model: 'llama-3.2-3b', precision: 'bf16-true' })
    const result = exportPlan(p, { format: 'deepspeed' })
    expect(result.plan.settings.precision).toBe('bf16-mixed')
    expect(result.plan.memory.perDevice.total).toBeGreaterThan(p.memory.perDevice.total * 1.2)
    expect(result.warnings.map((w) => w.id)).toContain('deepspeed-pure-half-as-mixed')
    expect(json(result.files, 'rigfit-plan.json')).toMatchObject({ settings: { precision: 'bf16-mixed' } })
    expect(trainedPrecision('deepspeed', result.files, result.plan)).toBe('bf16-mixed')
  })

  it('the planner plans a pinned pure-half ZeRO run as the mixed run DeepSpeed makes of it', async () => {
    const p = await plan({
      gpu: 'RTX 4090',
      gpus: 2,
      model: 'llama-3.2-1b',
      precision: 'bf16-true',
      zero2: true,
    })
    expect(p.settings.sharding).toBe('zero2')
    expect(p.settings.precision).toBe('bf16-mixed')
    expect(p.trace.filter((t) => t.setting === 'precision').at(-1)?.reason).toMatch(/fp32 master/)
    // The memory is the mixed run's: the estimate at the plan's own settings is the plan's.
    const again = exportPlan(p, { format: 'deepspeed' })
    expect(again.plan.memory.perDevice.total).toBe(p.memory.perDevice.total)
  })
})

describe('4 and 5. FSDP wraps each layer and shards within a node in every format', () => {
  it('Lightning names the decoder-layer class in its auto-wrap policy', async () => {
    const p = await plan({ gpu: 'A100 80GB', gpus: 8, model: 'llama-3.1-8b', fsdp: true })
    expect(p.settings.strategy).toBe('fsdp')
    const strategy = yaml11(file(exportPlan(p, { format: 'lightning' }).files, 'lightning_config.yaml'))
      .trainer as { strategy: { init_args: { auto_wrap_policy: string[] } } }
    expect(strategy.strategy.init_args.auto_wrap_policy).toEqual([
      'transformers.models.llama.modeling_llama.LlamaDecoderLayer',
    ])
  })

  it('two nodes: hf, Lightning and accelerate all shard within a node (HYBRID_SHARD)', async () => {
    const p = await plan({ gpu: 'A100 80GB', gpus: 8, nodes: 2, model: 'llama-3.1-8b', fsdp: true })
    expect(p.settings.strategy).toBe('fsdp')
    for (const format of ['hf', 'lightning', 'accelerate', 'torchrun']) {
      const { sharded, wrapped } = shardingOf(format, exportPlan(p, { format }).files, p)
      expect({ format, sharded, wrapped }).toEqual({
        format,
        sharded: { engine: 'fsdp', over: 'node' },
        wrapped: 'layer',
      })
    }
  })
})

describe('6. smaller gaps', () => {
  it('Slurm never asks a node for more CPUs than it has (--gpus 4 --cpus 6)', async () => {
    const p = await plan({ gpu: 'A100 80GB', gpus: 4, cpus: 6, model: 'llama-3.2-1b' })
    const files = exportPlan(p, { format: 'slurm' }).files
    for (const path of ['train_torchrun.sbatch', 'train_lightning.sbatch']) {
      const d = parseSbatchDirectives(file(files, path))
      expect(Number(d.get('--cpus-per-task')) * Number(d.get('--ntasks-per-node'))).toBeLessThanOrEqual(6)
    }
    expect(behaviourMismatches(p, 'slurm', files, 6)).toEqual([])
  })

  it('the pytorch export on ROCm names the nccl backend, the one torch.distributed has', async () => {
    const p = await plan({ gpu: 'Instinct MI300X', gpus: 8, model: 'llama-3.2-1b' })
    expect(p.settings.backend).toBe('rccl')
    const source = file(exportPlan(p, { format: 'pytorch' }).files, 'rigfit_settings.py')
    expect(source).toMatch(/"backend": "nccl"/)
  })

  it('GPT-2 adapters set fan_in_fan_out for its Conv1D layers; Llama adapters do not', async () => {
    const gpt2 = await plan({ gpu: 'RTX 4090', gpus: 1, model: 'gpt2', method: 'lora' })
    expect(json(exportPlan(gpt2, { format: 'hf' }).files, 'adapter_config.json').fan_in_fan_out).toBe(true)
    const llama = await plan({ gpu: 'RTX 4090', gpus: 1, model: 'llama-3.2-1b', method: 'lora' })
    expect(json(exportPlan(llama, { format: 'hf' }).files, 'adapter_config.json').fan_in_fan_out).toBe(false)
  })

  it('hf, Lightning and Hydra name the planned attention kernel', async () => {
    const p = await plan({ gpu: 'RTX 4090', gpus: 1, model: 'llama-3.2-1b', method: 'lora' })
    const kernel = { eager: 'eager', sdpa: 'sdpa', flash: 'flash_attention_2' }[p.settings.attention]
    expect(json(exportPlan(p, { format: 'hf' }).files, 'model_args.json').attn_implementation).toBe(kernel)
    const lightning = yaml11(file(exportPlan(p, { format: 'lightning' }).files, 'lightning_config.yaml'))
    expect((lightning.model as Record<string, unknown>).attn_implementation).toBe(kernel)
    const hydra = yaml11(exportPlan(p, { format: 'hydra' }).files[0]?.content ?? '')
    expect((hydra.model as Record<string, unknown>).attn_implementation).toBe(kernel)
  })

  it("DeepSpeed's learning-rate schedule is the hf export's: linear warm-up, cosine to 0", async () => {
    const p = await plan({ gpu: 'A100 80GB', gpus: 4, model: 'llama-3.2-1b' })
    const files = exportPlan(p, { format: 'deepspeed' }).files
    expect((json(files, 'ds_config.json').scheduler as { params: unknown }).params).toMatchObject({
      warmup_type: 'linear',
      cos_min_ratio: 0,
      warmup_min_ratio: 0,
    })
    expect(behaviourMismatches(p, 'deepspeed', files, null)).toEqual([])
  })
})
