import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClusterProfile, HardwareProfile } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { FakeSlurm, HANG_SECONDS } from './helpers/fake-slurm.js'
import { rigfit } from './helpers/run-cli.js'
import { workspaceFixture } from './helpers/workspace-fixtures.js'

const machine = (name: string) =>
  HardwareProfile.parse(
    JSON.parse(readFileSync(workspaceFixture('@rigfit/core', 'machines', `${name}.json`), 'utf8')),
  )

/** Inside an allocation of `nodes`: the variables salloc and sbatch set, with the fake Slurm first on PATH. */
function inside(slurm: FakeSlurm, nodes: string): NodeJS.ProcessEnv {
  return { PATH: slurm.path, SLURM_JOB_ID: '42', SLURM_JOB_NODELIST: nodes, SLURM_JOB_PARTITION: 'gpu' }
}

/** Outside any allocation: no SLURM_* variables, whatever the test runner had. */
function outside(slurm: FakeSlurm): NodeJS.ProcessEnv {
  return { PATH: slurm.path, SLURM_JOB_ID: '', SLURM_JOBID: '', SLURM_JOB_NODELIST: '', SLURM_NODELIST: '' }
}

function profileCluster(env: NodeJS.ProcessEnv, extra: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'rigfit-slurm-profile-'))
  const out = join(dir, 'cluster.json')
  const run = rigfit(['profile', '--slurm', '--out', out, ...extra], dir, env)
  const cluster = run.status === 0 ? ClusterProfile.parse(JSON.parse(readFileSync(out, 'utf8'))) : null
  return { ...run, cluster, out, dir }
}

const nodeOf = (cluster: ClusterProfile | null, name: string) => cluster?.nodes.find((n) => n.name === name)

describe('rigfit profile --slurm', () => {
  it('profiles each node of the allocation with this rigfit and writes one cluster profile', () => {
    const slurm = new FakeSlurm().node('gpu01', 'run').node('gpu02', 'fixture', machine('server-a100-40gb'))
    slurm.file('topology', 'SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=gpu[01-02]\n')
    const run = profileCluster(inside(slurm, 'gpu[01-02]'))
    expect(run.status, run.stderr).toBe(0)
    const cluster = run.cluster as ClusterProfile
    expect(cluster.nodes.map((n) => [n.name, n.status, n.switch])).toEqual([
      ['gpu01', 'ok', 'leaf1'],
      ['gpu02', 'ok', 'leaf1'],
    ])
    expect(cluster.scheduler).toEqual({
      kind: 'slurm',
      jobId: '42',
      partition: 'gpu',
      allocation: 'existing',
    })
    // gpu01 ran the real command: this machine's own profile came back through srun.
    expect(nodeOf(cluster, 'gpu01')?.profile?.source).toBe('file')
    expect(nodeOf(cluster, 'gpu01')?.profile?.cpu.logicalCores).toBeGreaterThan(0)
    expect(cluster.network.switches).toBe(1)
    // One step per node, one task on it, with this rigfit's launcher and `profile --json`.
    const sruns = slurm.calls().filter((c) => c.startsWith('srun '))
    expect(sruns).toHaveLength(2)
    for (const node of ['gpu01', 'gpu02']) {
      const call = sruns.find((c) => c.includes(`--nodelist=${node}`)) as string
      expect(call).toContain('--jobid=42')
      expect(call).toContain('--ntasks-per-node=1')
      expect(call).toMatch(
        new RegExp(
          `${cluster.launcher.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join(' ')} profile --json$`,
        ),
      )
    }
    expect(slurm.calls().some((c) => c.startsWith('salloc') || c.startsWith('scancel'))).toBe(false)
  }, 120_000)

  it('names a node where rigfit is missing, marks it, and plans for the nodes that answered', () => {
    const slurm = new FakeSlurm()
      .node('a', 'fixture', machine('server-a100-40gb'))
      .node('b', 'missing')
      .node('c', 'fixture', machine('server-a100-40gb'))
    const run = profileCluster(inside(slurm, 'a,b,c'))
    expect(run.status, run.stderr).toBe(0)
    expect(run.stderr).toMatch(/Node b: rigfit is not installed on node b/)
    const b = nodeOf(run.cluster, 'b')
    expect(b).toMatchObject({ status: 'failed', profile: null })
    expect(b?.error).toMatch(/not installed on node b .*No such file/)
    expect(run.cluster?.notes.join('\n')).toMatch(/Node b has no profile/)

    const plan = JSON.parse(rigfit(['plan', '--from', run.out, '--model', 'gpt2', '--json'], run.dir).stdout)
    expect(plan.settings.nodes).toBe(2)
    const missing = plan.warnings.find((w: { id: string }) => w.id === 'cluster-nodes-missing')
    expect(missing.message).toMatch(/b \(failed\)/)
    const job = rigfit(
      ['export', '--mode', 'balanced', '--model', 'gpt2', '--from', run.out, '--format', 'slurm', '--json'],
      run.dir,
    )
    expect(job.status, job.stderr).toBe(0)
    const script = JSON.parse(job.stdout).files.find(
      (f: { path: string }) => f.path === 'train_torchrun.sbatch',
    ).content
    expect(script).toMatch(/^#SBATCH --nodes=2$/m)
    expect(script).toMatch(/^#SBATCH --exclude=b$/m)
  }, 120_000)

  it('names a node that prints garbage instead of a profile', () => {
    const slurm = new FakeSlurm().node('a', 'fixture', machine('desktop-rtx4090')).node('b', 'garbage')
    const run = profileCluster(inside(slurm, 'a,b'))
    expect(run.status, run.stderr).toBe(0)
    const b = nodeOf(run.cluster, 'b')
    expect(b?.status).toBe('invalid')
    expect(b?.error).toMatch(/^node b did not print a profile: node b is not valid JSON.*Welcome to b/)
  })

  it('names a node past its deadline, cancels its step and leaves no process behind', () => {
    const slurm = new FakeSlurm().node('a', 'fixture', machine('desktop-rtx4090')).node('b', 'hang')
    const run = profileCluster(inside(slurm, 'a,b'), ['--node-timeout', '5'])
    expect(run.status, run.stderr).toBe(0)
    expect(nodeOf(run.cluster, 'b')).toMatchObject({ status: 'timeout', profile: null })
    expect(nodeOf(run.cluster, 'b')?.error).toMatch(/node b did not answer within 5 s/)
    // The step that hung was found by its name and cancelled; nothing of it is left queued or running.
    expect(slurm.calls().some((c) => c === 'scancel 42.b')).toBe(true)
    expect(slurm.read('steps').trim()).toBe('')
    const ps = spawnSync('ps', ['-eo', 'args'], { encoding: 'utf8' }).stdout
    expect(ps).not.toContain(`sleep ${HANG_SECONDS}`)
  }, 120_000)

  it('exits non-zero naming every node when no node answers', () => {
    const slurm = new FakeSlurm().node('a', 'missing').node('b', 'garbage')
    const run = profileCluster(inside(slurm, 'a,b'))
    expect(run.status).toBe(9)
    expect(run.stderr).toMatch(/E_SLURM_NO_PROFILE/)
    expect(run.stderr).toMatch(/node a/)
    expect(run.stderr).toMatch(/node b/)
  })

  it('refuses an allocation with no node, and --nodes 0', () => {
    const slurm = new FakeSlurm()
    const empty = profileCluster(inside(slurm, ''))
    expect(empty.status).toBe(6)
    expect(empty.stderr).toMatch(/Slurm job 42 holds no nodes/)
    const zero = profileCluster(outside(slurm), ['--partition', 'debug', '--nodes', '0'])
    expect(zero.status).toBe(2)
    expect(zero.stderr).toMatch(/--nodes 0 asks for an allocation with no node/)
    expect(slurm.calls()).toEqual([])
  })

  it('says Slurm is missing when srun is not on PATH', () => {
    const empty = mkdtempSync(join(tmpdir(), 'rigfit-no-slurm-'))
    const run = rigfit(['profile', '--slurm'], empty, {
      PATH: empty,
      SLURM_JOB_ID: '42',
      SLURM_JOB_NODELIST: 'a',
    })
    expect(run.status).toBe(6)
    expect(run.stderr).toMatch(/srun is not on PATH/)
    expect(run.stderr).toMatch(/Suggestion: .*rigfit plan --cluster/)
  })

  it('outside an allocation asks salloc for the nodes and releases them, also when it fails', () => {
    const slurm = new FakeSlurm()
      .node('a', 'fixture', machine('desktop-rtx4090'))
      .node('b', 'fixture', machine('desktop-rtx4090'))
    slurm.file('nodelist', 'a,b')
    const run = profileCluster(outside(slurm), ['--partition', 'debug', '--nodes', '2'])
    expect(run.status, run.stderr).toBe(0)
    expect(run.cluster?.scheduler).toMatchObject({ jobId: '77', partition: 'debug', allocation: 'rigfit' })
    const salloc = slurm.calls().find((c) => c.startsWith('salloc')) as string
    expect(salloc).toContain('--partition=debug')
    expect(salloc).toContain('--nodes=2')
    expect(salloc).toContain('--no-shell')
    expect(slurm.calls()).toContain('scancel 77')
    expect(slurm.read('jobs').trim()).toBe('')

    // Every node failing still releases the allocation.
    const failing = new FakeSlurm().node('a', 'garbage')
    failing.file('nodelist', 'a')
    expect(profileCluster(outside(failing), ['--partition', 'debug', '--nodes', '1']).status).toBe(9)
    expect(failing.read('jobs').trim()).toBe('')
    const denied = new FakeSlurm().file('deny', '')
    const refused = profileCluster(outside(denied), ['--partition', 'nope', '--nodes', '2'])
    expect(refused.status).toBe(9)
    expect(refused.stderr).toMatch(
      /salloc --partition=nope --nodes=2 gave no allocation: .*Invalid partition/,
    )

    const none = profileCluster(outside(slurm))
    expect(none.status).toBe(2)
    expect(none.stderr).toMatch(/Not inside a Slurm allocation/)
  }, 120_000)

  it('finds mixed GPU kinds across and inside nodes, and plans for the weakest, naming each node', () => {
    const a100 = machine('server-a100-40gb')
    const rtx = machine('desktop-rtx4090')
    const mixed = {
      ...a100,
      gpus: [...a100.gpus, { ...(rtx.gpus[0] as (typeof rtx.gpus)[0]), index: a100.gpus.length }],
    }
    const slurm = new FakeSlurm()
      .node('big', 'fixture', machine('server-4x-a100-40gb'))
      .node('odd', 'fixture', mixed)
      .node('small', 'fixture', rtx)
    const run = profileCluster(inside(slurm, 'big,odd,small'))
    expect(run.status, run.stderr).toBe(0)
    const cluster = run.cluster as ClusterProfile
    const devices = cluster.differences.find((d) => d.field === 'training devices')
    expect(Object.keys(devices?.values ?? {})).toEqual(['big', 'odd', 'small'])
    expect(cluster.notes.join('\n')).toMatch(/Node odd mixes GPU models/)

    const plan = JSON.parse(rigfit(['plan', '--from', run.out, '--model', 'gpt2', '--json'], run.dir).stdout)
    expect(plan.settings.nodes).toBe(3)
    const heterogeneous = plan.warnings.find((w: { id: string }) => w.id === 'heterogeneous-cluster')
    // The RTX 4090 (24 GB) is the weakest node, below the A100 40GB ones.
    expect(heterogeneous.message).toMatch(/planned as the weakest, small \(1x .*4090/)
    expect(plan.settings.gpus).toBe(1)
    const differs = plan.warnings.filter((w: { id: string }) => w.id === 'cluster-difference')
    expect(differs[0].message).toMatch(/big: .*; odd: .*; small: /)
  }, 120_000)
})
