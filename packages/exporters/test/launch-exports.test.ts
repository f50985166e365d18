import { spawnSync } from 'node:child_process'
import { chmod, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { launchBackend } from '../src/engine.js'
import { exportPlan } from '../src/export-plan.js'
import { readPyDict } from '../src/formats/pytorch.js'
import { parseSbatchDirectives, parseSrunFlags } from '../src/formats/slurm.js'
import { parseTorchrunFlags } from '../src/formats/torchrun.js'
import type { ExportFile } from '../src/types.js'
import { writeExportFiles } from '../src/write-files.js'
import { loadFixturePlan } from './helpers/fixture-plans.js'
import { yaml11 } from './helpers/read-back.js'
import { upstream } from './helpers/upstream.js'

type Json = Record<string, unknown>
const file = (files: ExportFile[], path: string) => files.find((f) => f.path === path)?.content ?? ''
const json = (files: ExportFile[], path: string) => JSON.parse(file(files, path) || 'null') as Json | null
const zeroOf = (files: ExportFile[], path = 'ds_config.json') => json(files, path)?.zero_optimization as Json
const strategyOf = (plan: TrainingPlan, nodes?: number) =>
  (
    yaml11(file(exportPlan(plan, { format: 'lightning', nodes }).files, 'lightning_config.yaml'))
      .trainer as Json
  ).strategy
const withSettings = (plan: TrainingPlan, patch: Partial<TrainingPlan['settings']>): TrainingPlan => ({
  ...plan,
  settings: { ...plan.settings, ...patch },
})

// The planner no longer makes FSDP with optimizer-only offload; a plan file from an older rigfit still has it.
const fsdpOptimizer = withSettings(loadFixturePlan('a100x4-zero3-optimizer-offload'), {
  strategy: 'fsdp',
  sharding: 'fsdp',
})
const fsdpAll = loadFixturePlan('a100x4-lora-fsdp-offload-2nodes')
const zero2 = loadFixturePlan('a100x4-zero2')
const zeroOffload = loadFixturePlan('rtx4090-qlora-zero-offload')

describe('exports keep what the plan offloads', () => {
  it('FSDP with optimizer-only offload never offloads parameters: it runs as ZeRO-3 with optimizer offload', () => {
    const hf = exportPlan(fsdpOptimizer, { format: 'hf' })
    const args = json(hf.files, 'training_args.json') as Json
    expect(args.fsdp).toBeUndefined()
    expect(args.deepspeed).toBe('ds_config.json')
    expect(zeroOf(hf.files)).toMatchObject({ stage: 3, offload_optimizer: { device: 'cpu' } })
    expect(zeroOf(hf.files).offload_param).toBeUndefined()
    const accelerate = yaml11(
      file(exportPlan(fsdpOptimizer, { format: 'accelerate' }).files, 'accelerate_config.yaml'),
    )
    expect(accelerate.distributed_type).toBe('DEEPSPEED')
    expect(accelerate.deepspeed_config).toMatchObject({
      zero_stage: 3,
      offload_optimizer_device: 'cpu',
      offload_param_device: 'none',
    })
    expect(accelerate.fsdp_config).toBeUndefined()
    expect(strategyOf(fsdpOptimizer)).toEqual({
      class_path: 'lightning.pytorch.strategies.DeepSpeedStrategy',
      init_args: {
        stage: 3,
        offload_optimizer: true,
        offload_parameters: false,
        offload_optimizer_device: 'cpu',
        offload_params_device: 'cpu',
      },
    })
    for (const format of ['hf', 'accelerate', 'lightning', 'torchrun'])
      expect(exportPlan(fsdpOptimizer, { format }).warnings.map((w) => w.id)).toContain(
        'fsdp-optimizer-offload-as-zero3',
      )
  })

  it('FSDP that offloads everything says so; FSDP without offload offloads nothing', () => {
    // Two nodes: sharded within each, replicated across them, as the accelerate export and the plan's memory.
    expect((json(exportPlan(fsdpAll, { format: 'hf' }).files, 'training_args.json') as Json).fsdp).toBe(
      'hybrid_shard auto_wrap offload',
    )
    const machine0 = yaml11(
      file(exportPlan(fsdpAll, { format: 'accelerate' }).files, 'accelerate_config_machine0.yaml'),
    )
    expect((machine0.fsdp_config as Json).fsdp_offload_params).toBe(true)
    expect(strategyOf(fsdpAll)).toMatchObject({
      class_path: 'lightning.pytorch.strategies.FSDPStrategy',
      init_args: { cpu_offload: true, sharding_strategy: 'HYBRID_SHARD' },
    })
    const none = loadFixturePlan('rtx3090x2-lora-fsdp')
    expect((json(exportPlan(none, { format: 'hf' }).files, 'training_args.json') as Json).fsdp).toBe(
      'full_shard auto_wrap',
    )
    expect(strategyOf(none)).toMatchObject({
      class_path: 'lightning.pytorch.strategies.FSDPStrategy',
      init_args: { cpu_offload: false, sharding_strategy: 'FULL_SHARD' },
    })
  })
})

describe('Lightning strategies are names Lightning registers', () => {
  const registered = upstream('lightning').strategies as string[]
  it.each([
    ['zero1', 'none', 'deepspeed_stage_1'],
    ['zero2', 'none', 'deepspeed_stage_2'],
    ['zero2', 'optimizer', 'deepspeed_stage_2_offload'],
    ['zero3', 'none', 'deepspeed_stage_3'],
    ['zero3', 'all', 'deepspeed_stage_3_offload'],
  ] as const)('%s with offload %s is %s', (sharding, offload, name) => {
    expect(strategyOf(withSettings(zero2, { sharding, offload }))).toBe(name)
    expect(registered).toContain(name)
  })

  it('writes a DeepSpeedStrategy where no name exists (ZeRO-1 with optimizer offload is not registered)', () => {
    expect(registered).not.toContain('deepspeed_stage_1_offload')
    expect(strategyOf(withSettings(zero2, { sharding: 'zero1', offload: 'optimizer' }))).toMatchObject({
      init_args: { stage: 1, offload_optimizer: true, offload_parameters: false },
    })
  })

  it('runs a single-GPU ZeRO-Offload plan on one device in every launcher', () => {
    expect(strategyOf(zeroOffload)).toBe('deepspeed_stage_3_offload')
    const config = yaml11(
      file(exportPlan(zeroOffload, { format: 'accelerate' }).files, 'accelerate_config.yaml'),
    )
    expect(config).toMatchObject({ distributed_type: 'DEEPSPEED', num_processes: 1 })
    expect(config.deepspeed_config).toMatchObject({
      zero_stage: 3,
      offload_optimizer_device: 'cpu',
      offload_param_device: 'cpu',
    })
    const torchrun = exportPlan(zeroOffload, { format: 'torchrun' }).files
    expect(parseTorchrunFlags(file(torchrun, 'launch_torchrun.sh'))?.get('--nproc_per_node')).toBe('1')
    expect(file(torchrun, 'launch_torchrun.sh')).toContain(
      'export RIGFIT_DEEPSPEED_CONFIG="$HERE/ds_config.json"',
    )
    expect(zeroOf(torchrun)).toMatchObject({
      stage: 3,
      offload_param: { device: 'cpu' },
      offload_optimizer: { device: 'cpu' },
    })
    expect(file(exportPlan(zeroOffload, { format: 'deepspeed' }).files, 'launch_deepspeed.sh')).toContain(
      '--num_gpus 1',
    )
    expect(
      (json(exportPlan(zeroOffload, { format: 'hf' }).files, 'training_args.json') as Json).deepspeed,
    ).toBe('ds_config.json')
  })

  it('starts the process group DeepSpeed needs even on one GPU: nccl on a GPU, gloo on a CPU', () => {
    // The plan needs no collectives of its own (backend none), but deepspeed.initialize creates a process group.
    expect(zeroOffload.settings.backend).toBe('none')
    const args = json(exportPlan(zeroOffload, { format: 'hf' }).files, 'training_args.json') as Json
    expect(args.ddp_backend).toBe('nccl')
    const settings = readPyDict(
      file(exportPlan(zeroOffload, { format: 'pytorch' }).files, 'rigfit_settings.py'),
      'SETTINGS',
    )
    expect(settings?.backend).toBe('nccl')
    expect(
      parseTorchrunFlags(
        file(exportPlan(zeroOffload, { format: 'torchrun' }).files, 'launch_torchrun.sh'),
      )?.has('--standalone'),
    ).toBe(true)
    const onCpu = withSettings(zeroOffload, { device: 'cpu' })
    expect(launchBackend(onCpu)).toBe('gloo')
    // One process without DeepSpeed keeps no backend.
    expect(
      launchBackend(withSettings(zeroOffload, { strategy: 'single', sharding: 'none', offload: 'none' })),
    ).toBe('none')
  })
})

describe('the HF DeepSpeed config leaves to the Trainer what TrainingArguments say', () => {
  it('writes "auto" where the Trainer fills values; the deepspeed format writes them out', () => {
    const hf = json(exportPlan(zero2, { format: 'hf' }).files, 'ds_config.json') as Json
    expect(hf).toMatchObject({
      train_batch_size: 'auto',
      train_micro_batch_size_per_gpu: 'auto',
      gradient_accumulation_steps: 'auto',
      gradient_clipping: 'auto',
      bf16: { enabled: 'auto' },
      optimizer: { params: { lr: 'auto', betas: 'auto', eps: 'auto', weight_decay: 'auto' } },
    })
    const ds = json(exportPlan(zero2, { format: 'deepspeed' }).files, 'ds_config.json') as Json
    expect(ds.train_batch_size).toBe(zero2.settings.effectiveBatch)
    expect(ds.train_micro_batch_size_per_gpu).toBe(zero2.settings.microBatch)
  })
})

/** Runs an exported launch script with fake launchers on PATH that print their arguments. */
async function runScript(files: ExportFile[], script: string, env: Record<string, string>) {
  const dir = await mkdtemp(join(tmpdir(), 'rigfit-launch-'))
  await writeExportFiles(dir, files, { force: false })
  const bin = join(dir, 'fake-bin')
  const { mkdir } = await import('node:fs/promises')
  await mkdir(bin)
  for (const tool of ['accelerate', 'torchrun', 'deepspeed']) {
    await writeFile(join(bin, tool), `#!/bin/sh\necho ${tool} "$@"\n`)
    await chmod(join(bin, tool), 0o755)
  }
  const result = spawnSync('bash', [join(dir, script), 'train.py'], {
    encoding: 'utf8',
    env: { PATH: `${bin}:${process.env.PATH ?? ''}`, ...env },
  })
  return { code: result.status, stdout: result.stdout.trim(), stderr: result.stderr, dir }
}

describe('multi-node accelerate never rendezvouses each machine with itself', () => {
  const files = exportPlan(fsdpAll, { format: 'accelerate' })

  it('configs without --hosts carry no address, and the launch script demands MASTER_ADDR', async () => {
    for (const rank of [0, 1]) {
      const config = yaml11(file(files.files, `accelerate_config_machine${rank}.yaml`))
      expect(config).toMatchObject({
        machine_rank: rank,
        num_machines: 2,
        rdzv_backend: 'static',
        same_network: true,
      })
      expect(config.main_process_ip).toBeUndefined()
    }
    expect(files.warnings.map((w) => w.id)).toContain('accelerate-main-process-ip')
    const missing = await runScript(files.files, 'launch_accelerate.sh', { NODE_RANK: '1' })
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toMatch(/MASTER_ADDR.*machine 0/)
    const run = await runScript(files.files, 'launch_accelerate.sh', {
      NODE_RANK: '1',
      MASTER_ADDR: '10.0.0.7',
    })
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(`--config_file=${run.dir}/accelerate_config_machine1.yaml`)
    expect(run.stdout).toContain('--main_process_ip=10.0.0.7')
    expect(run.stdout).toMatch(/train\.py$/)
    const badRank = await runScript(files.files, 'launch_accelerate.sh', { NODE_RANK: '5', MASTER_ADDR: 'x' })
    expect(badRank.code).toBe(2)
  })

  it('with --hosts the first host is main_process_ip and the script needs no address', async () => {
    const hosted = exportPlan(fsdpAll, { format: 'accelerate', hosts: ['gpu-a', 'gpu-b'] })
    expect(yaml11(file(hosted.files, 'accelerate_config_machine1.yaml')).main_process_ip).toBe('gpu-a')
    const run = await runScript(hosted.files, 'launch_accelerate.sh', { NODE_RANK: '0' })
    expect(run.code).toBe(0)
    expect(run.stdout).not.toContain('--main_process_ip')
  })

  it('multi-node DeepSpeed configs name their launcher', () => {
    const config = yaml11(
      file(exportPlan(zero2, { format: 'accelerate', nodes: 2 }).files, 'accelerate_config_machine0.yaml'),
    )
    expect((config.deepspeed_config as Json).deepspeed_multinode_launcher).toBe('standard')
  })
})

describe('torchrun and SLURM scripts', () => {
  it('use the flag spellings torch 1.13 through 2.x accept and state that range', async () => {
    const torch = upstream('torch')
    for (const [plan, nodes] of [
      [zero2, undefined],
      [zero2, 2],
    ] as const) {
      const script = file(exportPlan(plan, { format: 'torchrun', nodes }).files, 'launch_torchrun.sh')
      expect(script).toContain('torch 1.13 to 2.x')
      for (const flag of parseTorchrunFlags(script)?.keys() ?? []) {
        expect(torch.torchrun_1_13).toContain(flag)
        expect(torch.torchrun_2).toContain(flag)
      }
    }
    const run = await runScript(
      exportPlan(zero2, { format: 'torchrun', nodes: 2 }).files,
      'launch_torchrun.sh',
      {
        MASTER_ADDR: 'node-a',
      },
    )
    expect(run.stdout).toBe(
      'torchrun --nnodes=2 --nproc_per_node=4 --redirects=1 --tee=1 --rdzv_backend=c10d --rdzv_endpoint=node-a:29500 --rdzv_id=rigfit --max_restarts=3 train.py',
    )
  })

  it('srun gets --cpus-per-task itself; one node computes no rendezvous address', () => {
    for (const nodes of [1, 2]) {
      const files = exportPlan(zero2, { format: 'slurm', nodes }).files
      for (const path of ['train_torchrun.sbatch', 'train_lightning.sbatch']) {
        const script = file(files, path)
        expect(parseSrunFlags(script)?.get('--cpus-per-task'), path).toBe(
          parseSbatchDirectives(script).get('--cpus-per-task'),
        )
        if (path === 'train_torchrun.sbatch') expect(/MASTER_(ADDR|PORT)=/.test(script)).toBe(nodes > 1)
      }
    }
  })
})

describe('phase A/B meta-configs', () => {
  const plan = loadFixturePlan('rtx4090-bf16')
  const phase = (files: ExportFile[], name: string) =>
    files
      .filter((f) => f.path.startsWith(`${name}/`))
      .map((f) => ({ ...f, path: f.path.slice(name.length + 1) }))

  it('phase A trains at its own sequence; phase B starts from what phase A wrote', () => {
    const files = exportPlan(plan, { format: 'hf', meta: true }).files
    const [a, b] = [phase(files, 'phase-a'), phase(files, 'phase-b')]
    expect(json(a, 'model_args.json')?.block_size).toBe(plan.settings.seq / 4)
    expect(json(b, 'model_args.json')?.block_size).toBe(plan.settings.seq)
    // The model keeps its positions: phase B continues the same model at the full length.
    expect(json(a, 'config.json')?.max_position_embeddings).toBe(plan.model.maxPositions)
    expect(json(b, 'model_args.json')?.model_name_or_path).toBe(json(a, 'training_args.json')?.output_dir)
    const lightning = exportPlan(plan, { format: 'lightning', meta: true }).files
    const la = yaml11(file(phase(lightning, 'phase-a'), 'lightning_config.yaml'))
    const lb = yaml11(file(phase(lightning, 'phase-b'), 'lightning_config.yaml'))
    const dirA = ((la.trainer as Json).callbacks as Array<{ init_args: Json }>)[0]?.init_args.dirpath
    expect(lb.ckpt_path).toBe(`${dirA}/last.ckpt`)
    expect((lb.data as Json).block_size).toBe(plan.settings.seq)
    expect((la.data as Json).block_size).toBe(plan.settings.seq / 4)
    const meta = json(files, 'rigfit-meta.json') as { phases: Array<{ steps: number }> }
    expect((lb.trainer as Json).max_steps).toBe((meta.phases[0]?.steps ?? 0) + (meta.phases[1]?.steps ?? 0))
    const torchrun = exportPlan(plan, { format: 'torchrun', meta: true }).files
    expect(file(phase(torchrun, 'phase-b'), 'launch_torchrun.sh')).toContain(`RIGFIT_RESUME_FROM:-${dirA}`)
    expect(file(phase(torchrun, 'phase-a'), 'launch_torchrun.sh')).not.toContain('RIGFIT_RESUME_FROM')
  })
})

describe('Hydra tells bf16 from fp16', () => {
  it('writes the precision string', () => {
    for (const [name, precision] of [
      ['rtx4090-bf16', 'bf16-mixed'],
      ['t4-fp16', 'fp16-mixed'],
    ] as const) {
      const group = yaml11(exportPlan(loadFixturePlan(name), { format: 'hydra' }).files[0]?.content ?? '')
      expect((group.device as Json).precision).toBe(precision)
      expect(group.device).not.toHaveProperty('mixed_precision')
    }
  })
})

describe('threads and CPUs per rank fit the planned machine', () => {
  it('OMP_NUM_THREADS and --cpus-per-task never exceed the cores of the node the plan is for', async () => {
    const { FIXTURE_RECIPES } = await import('./helpers/fixture-plans.js')
    const { machineProfile } = await import('./helpers/planner-plan.js')
    for (const [name, { recipe }] of Object.entries(FIXTURE_RECIPES)) {
      const plan = loadFixturePlan(name)
      if (plan.settings.device === 'mps') continue
      const cores = machineProfile(recipe.machine).cpu.logicalCores
      const ranks = Math.max(plan.settings.gpus, 1)
      const files = exportPlan(plan, { format: 'slurm' }).files
      const omp = Number(/^export OMP_NUM_THREADS=(\d+)$/m.exec(file(files, 'train_torchrun.sbatch'))?.[1])
      expect(omp * ranks, `${name}: ${omp} threads x ${ranks} ranks on ${cores} cores`).toBeLessThanOrEqual(
        cores,
      )
      for (const path of ['train_torchrun.sbatch', 'train_lightning.sbatch']) {
        const d = parseSbatchDirectives(file(files, path))
        const perNode = Number(d.get('--cpus-per-task')) * Number(d.get('--ntasks-per-node'))
        expect(perNode, `${name} ${path}`).toBeLessThanOrEqual(cores)
      }
    }
  })
})
