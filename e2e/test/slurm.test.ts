import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { effectiveBatchOf, worldSize } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { OPTIONAL, pythonWithTorch, TRAIN_PY, testEnv } from './helpers/engines.js'
import { exportedPlan, planInto, rigfitJson, tinyModelDir } from './helpers/rigfit.js'
import { missingSlurmEngines, slurmClusterForSuite } from './helpers/slurm-suite.js'
import { explainLaunchFailure, rankSettings, stepLines } from './helpers/trainer-output.js'

const python = pythonWithTorch()
const missing = missingSlurmEngines('slurm', python)
const JOB_DEADLINE = 840_000
const TEST_DEADLINE = 900_000
const STEPS = 3

/** The directives of an sbatch script, e.g. `--nodes` -> `2`. */
function directives(script: string): Map<string, string> {
  return new Map(
    [...script.matchAll(/^#SBATCH\s+(--[\w-]+)=(\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]),
  )
}

describe.skipIf(missing.length > 0 && OPTIONAL)(
  'the exported SLURM script on a Slurm cluster of this machine',
  () => {
    const cluster = slurmClusterForSuite(2, missing)

    /** plan -> export slurm for `nodes` CPU nodes -> sbatch -> the job's output, checked against the export. */
    async function submit(nodes: number) {
      const dir = tinyModelDir(`slurm-${nodes}`)
      await planInto(dir, [
        '--model',
        join(dir, 'config.json'),
        '--seq',
        '64',
        '--target-batch',
        '16',
        '--method',
        'full',
      ])
      const exportArgs = [
        'export',
        '--plan',
        'plan.json',
        '--format',
        'slurm',
        '--nodes',
        `${nodes}`,
        '--out',
        'job',
      ]
      await rigfitJson(exportArgs, dir)
      const jobDir = join(dir, 'job')
      const script = readFileSync(join(jobDir, 'train_torchrun.sbatch'), 'utf8')
      const sbatch = directives(script)
      const plan = exportedPlan(jobDir)
      expect(Number(sbatch.get('--nodes'))).toBe(nodes)
      expect(Number(sbatch.get('--nodes')) * Number(sbatch.get('--ntasks-per-node'))).toBe(
        worldSize(plan.settings),
      )

      const id = await cluster.sbatch(jobDir, testEnv(python as string), [
        'train_torchrun.sbatch',
        ...[TRAIN_PY, '--max-steps', `${STEPS}`, '--out', 'ckpt'],
      ])
      const end = await cluster.waitForJob(id, JOB_DEADLINE)
      const outFile = join(jobDir, `${sbatch.get('--job-name')}-${id}.out`)
      const output = existsSync(outFile) ? readFileSync(outFile, 'utf8') : `(no ${outFile})`
      expect(end, `${explainLaunchFailure(output)}\n${cluster.logs()}`).toEqual({
        state: 'COMPLETED',
        exitCode: '0:0',
      })

      const ranks = rankSettings(output)
      expect(ranks.map((r) => r.rank).sort()).toEqual([...Array(worldSize(plan.settings)).keys()])
      for (const rank of ranks) {
        expect(rank).toMatchObject({
          world_size: worldSize(plan.settings),
          micro_batch: plan.settings.microBatch,
          grad_accum: plan.settings.gradAccum,
          effective_batch: effectiveBatchOf(plan.settings),
        })
      }
      const steps = stepLines(output)
      expect(steps.at(-1)).toMatchObject({ step: STEPS, total_steps: STEPS })
      expect(existsSync(join(jobDir, `ckpt/ckpt-${String(STEPS).padStart(8, '0')}.pt`))).toBe(true)
      return ranks
    }

    it('a 2-task CPU job: one torchrun per node on two nodes, the ranks rendezvous and train the planned batch', {
      timeout: TEST_DEADLINE,
    }, async () => {
      const ranks = await submit(2)
      // Each task ran on its own Slurm node (both nodes are slurmd daemons of this machine).
      expect(new Set(ranks.map((r) => r.node))).toEqual(new Set(cluster.nodes))
    })

    it('a one-node job runs the same script with one task', { timeout: TEST_DEADLINE }, async () => {
      const ranks = await submit(1)
      expect(ranks).toHaveLength(1)
    })
  },
)
