import { spawnSync } from 'node:child_process'
import type { NodeNetwork } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { exportPlan } from '../src/export-plan.js'
import { cpusPerRank, parseSbatchDirectives, parseSrunFlags } from '../src/formats/slurm.js'
import { parseTorchrunFlags } from '../src/formats/torchrun.js'
import type { ClusterShape, ExportFile } from '../src/types.js'
import { loadFixturePlan } from './helpers/fixture-plans.js'

const file = (files: ExportFile[], path: string) => files.find((f) => f.path === path)?.content ?? ''
const h100 = loadFixturePlan('h100x8-fsdp-2nodes')
const cpu = loadFixturePlan('cpu-2core')

function shape(patch: Partial<ClusterShape> = {}): ClusterShape {
  return {
    nodes: ['gpu01', 'gpu02'],
    excluded: [],
    partition: 'train',
    cpusPerNode: 64,
    network: 'infiniband',
    ports: ['mlx5_0/1', 'mlx5_1/1'],
    launcher: ['/opt/node/bin/node', '/shared/rigfit/bin/run.js'],
    ...patch,
  }
}

/** The value a script exports for a variable when the environment leaves it unset. */
function exported(script: string, name: string): string | undefined {
  return new RegExp(`^export ${name}="\\$\\{${name}:-([^}]*)\\}"$`, 'm').exec(script)?.[1]
}

describe('a Slurm job exported for a profiled cluster', () => {
  it('asks for exactly the allocation: its nodes, partition, GPUs per node, and leaves out failed nodes', () => {
    const files = exportPlan(h100, {
      format: 'slurm',
      nodes: 2,
      cluster: shape({ excluded: ['gpu03'] }),
    }).files
    for (const path of ['train_torchrun.sbatch', 'train_lightning.sbatch']) {
      const d = parseSbatchDirectives(file(files, path))
      expect(d.get('--nodes'), path).toBe('2')
      expect(d.get('--partition'), path).toBe('train')
      expect(d.get('--exclude'), path).toBe('gpu03')
      expect(d.get('--gpus-per-node'), path).toBe(String(h100.settings.gpus))
    }
  })

  it('keeps the CPUs per task within the node, whatever the node has (a sweep)', () => {
    for (const cpusPerNode of [1, 2, 3, 8, 16, 64, 256]) {
      const files = exportPlan(h100, { format: 'slurm', nodes: 2, cluster: shape({ cpusPerNode }) }).files
      const torchrun = parseSbatchDirectives(file(files, 'train_torchrun.sbatch'))
      const tasks = Number(torchrun.get('--ntasks-per-node'))
      const cpus = Number(torchrun.get('--cpus-per-task'))
      expect(cpus * tasks).toBeLessThanOrEqual(Math.max(cpusPerNode, tasks))
      expect(cpus).toBe(Math.max(1, Math.min(cpusPerRank(h100) * h100.settings.gpus, cpusPerNode)))
      expect(parseSrunFlags(file(files, 'train_torchrun.sbatch'))?.get('--cpus-per-task')).toBe(String(cpus))
      const lightning = parseSbatchDirectives(file(files, 'train_lightning.sbatch'))
      expect(
        Number(lightning.get('--cpus-per-task')) * Number(lightning.get('--ntasks-per-node')),
      ).toBeLessThanOrEqual(Math.max(cpusPerNode, Number(lightning.get('--ntasks-per-node'))))
    }
  })

  it('sets NCCL for the network measured between the nodes, each a default the environment overrides', () => {
    const cases: [NodeNetwork, string[], Record<string, string | undefined>][] = [
      [
        'infiniband',
        ['mlx5_0/1', 'mlx5_1/1'],
        { NCCL_IB_DISABLE: '0', NCCL_IB_HCA: 'mlx5_0,mlx5_1', NCCL_IB_GID_INDEX: undefined },
      ],
      ['roce', ['mlx5_0/1'], { NCCL_IB_DISABLE: '0', NCCL_IB_HCA: 'mlx5_0', NCCL_IB_GID_INDEX: '3' }],
      ['ethernet', ['eno1'], { NCCL_IB_DISABLE: '1', NCCL_SOCKET_IFNAME: 'eno1', NCCL_IB_HCA: undefined }],
      ['unknown', [], { NCCL_IB_DISABLE: undefined, NCCL_SOCKET_IFNAME: undefined }],
    ]
    for (const [network, ports, expected] of cases) {
      const files = exportPlan(h100, { format: 'slurm', nodes: 2, cluster: shape({ network, ports }) }).files
      for (const path of ['train_torchrun.sbatch', 'train_lightning.sbatch']) {
        const script = file(files, path)
        for (const [name, value] of Object.entries(expected))
          expect(exported(script, name), `${network} ${path} ${name}`).toBe(value)
      }
      const torchrun = exportPlan(h100, {
        format: 'torchrun',
        nodes: 2,
        cluster: shape({ network, ports }),
      }).files
      for (const [name, value] of Object.entries(expected))
        expect(exported(file(torchrun, 'launch_torchrun.sh'), name), `${network} torchrun ${name}`).toBe(
          value,
        )
    }
    // A CPU plan trains over gloo: no NCCL settings at all.
    const gloo = exportPlan(cpu, { format: 'slurm', nodes: 2, cluster: shape({ cpusPerNode: 2 }) }).files
    expect(file(gloo, 'train_torchrun.sbatch')).not.toMatch(/NCCL_/)
  })

  it("runs each node's torchrun under rigfit monitor, as the cluster ran rigfit, into one run folder", () => {
    const launcher = ['/opt/my node/bin/node', '/shared/rigfit/bin/run.js']
    const script = file(
      exportPlan(h100, { format: 'slurm', nodes: 2, cluster: shape({ launcher }) }).files,
      'train_torchrun.sbatch',
    )
    expect(script).toContain(`RIGFIT=('/opt/my node/bin/node' /shared/rigfit/bin/run.js)`)
    expect(script).toMatch(
      /srun --cpus-per-task=\d+ --export=ALL,\S+ "\$\{RIGFIT\[@\]\}" monitor --plan "\$RIGFIT_PLAN_FILE" --log-dir "\$RIGFIT_RUN_DIR" --max-restarts=0 --quiet -- torchrun/,
    )
    expect(parseTorchrunFlags(script)?.get('--nnodes')).toBe('2')
    // bash reads the array back as the two words of the launcher.
    const words = spawnSync(
      'bash',
      ['-c', `${script.split('\n').find((l) => l.startsWith('RIGFIT='))}; printf '%s\\n' "\${RIGFIT[@]}"`],
      { encoding: 'utf8' },
    ).stdout
    expect(words.trim().split('\n')).toEqual(launcher)
    // Without a cluster profile the job is as before: no monitor, no partition.
    const plain = file(exportPlan(h100, { format: 'slurm', nodes: 2 }).files, 'train_torchrun.sbatch')
    expect(plain).not.toMatch(/monitor|--partition/)
  })

  it('torchrun meets at the first node of the cluster, unless MASTER_ADDR is set', () => {
    const script = file(
      exportPlan(h100, { format: 'torchrun', nodes: 2, cluster: shape() }).files,
      'launch_torchrun.sh',
    )
    expect(script).toMatch(/^MASTER_ADDR="\$\{MASTER_ADDR:-gpu01\}"$/m)
    expect(script).toMatch(/each of the 2 nodes \(gpu01, gpu02\)/)
  })
})
