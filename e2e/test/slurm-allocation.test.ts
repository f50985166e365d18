import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClusterProfile, MonitorRecord, TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { OPTIONAL, pythonWithTorch, REPO, TRAIN_PY, testEnv } from './helpers/engines.js'
import { processesNaming, waitFor } from './helpers/processes.js'
import { rigfitJson } from './helpers/rigfit.js'
import { missingSlurmEngines, slurmClusterForSuite } from './helpers/slurm-suite.js'
import { explainLaunchFailure, rankSettings, stepLines } from './helpers/trainer-output.js'

const python = pythonWithTorch()
const missing = missingSlurmEngines('slurm-allocation', python)
// Generous deadlines for a loaded two-core machine; no time is asserted.
const ALLOCATION_DEADLINE = 600_000
const JOB_DEADLINE = 840_000
const TEST_DEADLINE = 1_700_000
const STEPS = 3

/** The commands a user types inside `salloc -N2`, as one script; the job id sbatch gives is written to job-id. */
const INSIDE_ALLOCATION = `set -euo pipefail
rigfit profile --slurm --node-timeout 600 --out cluster.json
rigfit plan --from cluster.json --model config.json --seq 64 --target-batch 16 --method full --json > plan.json
rigfit export --plan plan.json --from cluster.json --format slurm --out job
cd job
# The batch job gets its own Slurm variables, not the ones of this allocation.
for name in $(env | grep -o '^SLURM_[A-Z_]*' | grep -v '^SLURM_CONF$'); do unset "$name"; done
sbatch --parsable train_torchrun.sbatch "$TRAIN_PY" --max-steps ${STEPS} --out ckpt > ../job-id
`

describe.skipIf(missing.length > 0 && OPTIONAL)(
  'a Slurm allocation of two nodes profiled, planned and launched by rigfit',
  () => {
    const cluster = slurmClusterForSuite(2, missing)

    it('inside salloc -N2: profile --slurm, plan --from, export --format slurm, then sbatch trains on both nodes under rigfit monitor', {
      timeout: TEST_DEADLINE,
    }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'rigfit-e2e-allocation-'))
      copyFileSync(join(REPO, 'examples/pytorch/tiny-llama.json'), join(dir, 'config.json'))
      writeFileSync(join(dir, 'inside.sh'), INSIDE_ALLOCATION)
      const env = testEnv(python as string, { TRAIN_PY })
      const inside = await cluster.salloc(
        dir,
        env,
        ['-N2', '--job-name=rigfit-e2e', 'bash', 'inside.sh'],
        ALLOCATION_DEADLINE,
      )
      expect(inside.code, `${inside.stdout}\n${inside.stderr}\n${cluster.logs()}`).toBe(0)

      // One cluster profile: both slurmd nodes answered with this machine's profile.
      const profiled = ClusterProfile.parse(JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')))
      // Slurm lists the nodes in its own order (sorted by name), so they are compared as sets.
      expect(profiled.nodes.map((n) => [n.name, n.status]).sort()).toEqual(
        cluster.nodes.map((n) => [n, 'ok']).sort(),
      )
      expect(profiled.scheduler).toMatchObject({ kind: 'slurm', partition: 'e2e', allocation: 'existing' })
      const plan = TrainingPlan.parse(JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8')))
      expect(plan.settings.nodes).toBe(2)

      // The sbatch asks for exactly the allocation's shape.
      const script = readFileSync(join(dir, 'job/train_torchrun.sbatch'), 'utf8')
      const directive = (name: string) => new RegExp(`^#SBATCH ${name}=(\\S+)$`, 'm').exec(script)?.[1]
      expect(directive('--nodes')).toBe('2')
      expect(directive('--ntasks-per-node')).toBe('1')
      expect(directive('--partition')).toBe('e2e')
      const nodeCpus = Math.min(...profiled.nodes.map((n) => n.profile?.cpu.logicalCores ?? 0))
      expect(Number(directive('--cpus-per-task'))).toBeLessThanOrEqual(nodeCpus)

      const id = readFileSync(join(dir, 'job-id'), 'utf8').trim().split(';')[0] as string
      const end = await cluster.waitForJob(id, JOB_DEADLINE)
      const outFile = join(dir, 'job', `${directive('--job-name')}-${id}.out`)
      const output = existsSync(outFile) ? readFileSync(outFile, 'utf8') : `(no ${outFile})`
      expect(end, `${explainLaunchFailure(output)}\n${cluster.logs()}`).toEqual({
        state: 'COMPLETED',
        exitCode: '0:0',
      })

      // Two ranks, one on each node, trained the planned batch to the last step.
      const ranks = rankSettings(output)
      expect(ranks.map((r) => r.rank).sort()).toEqual([0, 1])
      expect(new Set(ranks.map((r) => r.node))).toEqual(new Set(cluster.nodes))
      expect(stepLines(output).at(-1)).toMatchObject({ step: STEPS, total_steps: STEPS })

      // Each node's monitor recorded into the same run folder, one log per node, and the run completed there.
      const runDir = join(dir, 'job', 'rigfit-runs', id)
      expect(
        readdirSync(runDir)
          .filter((f) => f.endsWith('.jsonl'))
          .sort(),
      ).toEqual(cluster.nodes.map((n) => `monitor-${n}.jsonl`).sort())
      for (const node of cluster.nodes) {
        const records = readFileSync(join(runDir, `monitor-${node}.jsonl`), 'utf8')
          .trim()
          .split('\n')
          .map((line) => MonitorRecord.parse(JSON.parse(line)))
        expect(
          records.find((r) => r.type === 'summary'),
          node,
        ).toMatchObject({ outcome: 'completed', exitCode: 0 })
      }
      const report = (await rigfitJson(['report', '--run', runDir, '--out', join(dir, 'run.html')], dir)) as {
        kinds: string[]
      }
      expect(report.kinds).toContain('run')
      const html = readFileSync(join(dir, 'run.html'), 'utf8')
      for (const node of cluster.nodes) expect(html).toContain(`Run on node ${node}`)

      // Nothing is left: no job queued or running, no process of the run.
      expect(await cluster.queue()).toBe('')
      await waitFor(
        'the job processes to end',
        () => (processesNaming(dir).length === 0 ? true : undefined),
        60_000,
      )
    })
  },
)
