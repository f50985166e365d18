import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildClusterProfile, HardwareProfile } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { rigfit, rigfitJson } from './helpers/run-cli.js'
import { workspaceFixture } from './helpers/workspace-fixtures.js'

const machine = (name: string) =>
  HardwareProfile.parse(
    JSON.parse(readFileSync(workspaceFixture('@rigfit/core', 'machines', `${name}.json`), 'utf8')),
  )

/** A cluster profile of two 4x A100 nodes on InfiniBand, as `rigfit profile --slurm` writes it. */
function clusterFile(): { dir: string; path: string } {
  const base = machine('server-4x-a100-40gb')
  const node = {
    ...base,
    interconnect: {
      ...base.interconnect,
      ports: [
        { name: 'mlx5_0/1', kind: 'infiniband' as const, speedGbps: 200, up: true },
        { name: 'eno1', kind: 'ethernet' as const, speedGbps: 10, up: true },
      ],
    },
  }
  const cluster = buildClusterProfile({
    createdAt: '2026-01-01T00:00:00.000Z',
    rigfitVersion: '0.1.0',
    scheduler: { kind: 'slurm', jobId: '5', partition: 'a100', allocation: 'existing' },
    launcher: ['/usr/bin/node', '/opt/rigfit/bin/run.js'],
    nodes: [
      { name: 'a1', status: 'ok', error: null, profile: node },
      { name: 'a2', status: 'ok', error: null, profile: node },
    ],
    leafSwitch: new Map(),
    notes: [],
  })
  const dir = mkdtempSync(join(tmpdir(), 'rigfit-cluster-from-'))
  const path = join(dir, 'cluster.json')
  writeFileSync(path, JSON.stringify(cluster))
  return { dir, path }
}

describe('--from a cluster profile', () => {
  it('plan, analyze, report and export plan every node on the measured network', () => {
    const { dir, path } = clusterFile()
    const plan = rigfitJson(['plan', '--from', path, '--model', 'llama-3.2-1b'], dir)
    expect(plan.settings.nodes).toBe(2)
    expect(plan.settings.gpus).toBe(4)
    // The network is known (InfiniBand on both nodes): no warning that it was assumed.
    expect(plan.warnings.map((w: { id: string }) => w.id)).not.toContain('assumed-network')
    const analyzed = rigfitJson(['analyze', '--from', path, '--model', 'llama-3.2-1b'], dir)
    expect(
      Object.values(analyzed.plans).map((p) => (p as { settings: { nodes: number } }).settings.nodes),
    ).toEqual([2, 2, 2])
    const report = rigfitJson(
      [
        'report',
        '--from',
        path,
        '--model',
        'llama-3.2-1b',
        '--mode',
        'balanced',
        '--out',
        join(dir, 'r.html'),
      ],
      dir,
    )
    expect(report.kinds).toEqual(['plans'])
    expect(readFileSync(join(dir, 'r.html'), 'utf8')).toContain('gpus = 4, nodes = 2')

    const exported = rigfitJson(
      ['export', '--mode', 'balanced', '--model', 'llama-3.2-1b', '--from', path, '--format', 'slurm'],
      dir,
    )
    const sbatch = exported.files.find((f: { path: string }) => f.path === 'train_torchrun.sbatch').content
    expect(sbatch).toMatch(/^#SBATCH --nodes=2$/m)
    expect(sbatch).toMatch(/^#SBATCH --gpus-per-node=4$/m)
    expect(sbatch).toMatch(/^#SBATCH --partition=a100$/m)
    expect(sbatch).toMatch(/^export NCCL_IB_HCA="\$\{NCCL_IB_HCA:-mlx5_0\}"$/m)
    const torchrun = rigfitJson(
      ['export', '--plan', writePlan(dir, plan), '--from', path, '--format', 'torchrun'],
      dir,
    )
    expect(torchrun.files.find((f: { path: string }) => f.path === 'launch_torchrun.sh').content).toMatch(
      /MASTER_ADDR="\$\{MASTER_ADDR:-a1\}"/,
    )
  }, 240_000)

  it('is refused, saying where it belongs, where one machine is expected', () => {
    const { dir, path } = clusterFile()
    const run = rigfit(['profile', '--from', path], dir)
    expect(run.status).toBe(2)
    expect(run.stderr).toMatch(/is a cluster profile .*not one machine's profile/)
    expect(run.stderr).toMatch(/plan, analyze, export and report take it with --from/)
    const mismatch = rigfit(
      [
        'export',
        '--mode',
        'balanced',
        '--from',
        path,
        '--format',
        'slurm',
        '--nodes',
        '3',
        '--model',
        'gpt2',
      ],
      dir,
    )
    expect(mismatch.status).toBe(2)
    expect(mismatch.stderr).toMatch(/--nodes 3 differs from the 2 node\(s\) of the cluster profile/)
  }, 120_000)
})

function writePlan(dir: string, plan: unknown): string {
  const path = join(dir, 'plan.json')
  writeFileSync(path, JSON.stringify(plan))
  return path
}
