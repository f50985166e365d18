import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ExportManifest } from '@rigfit/core'
import { afterEach, describe, expect, it } from 'vitest'
import {
  E2E_TEST_TIMEOUT_MS,
  FAST_FLAGS,
  monitorEnv,
  ofType,
  planFixture,
  RTX4090_SCENARIO,
  readPlanFixture,
  runCli,
  StartedMonitors,
  tempDir,
  trainerEvents,
} from './helpers/harness.js'

// A trainer that knows only its exported config (an HF Trainer reading training_args.json, DeepSpeed reading
// ds_config.json, LightningCLI reading lightning_config.yaml) repeats an OOM unless the relaunch reads a config
// made again for the new settings. The fake trainer here reads its batch from the file named by --config and
// ignores RIGFIT_MICRO_BATCH, so only the regenerated file can make the second attempt fit.
const plan = readPlanFixture()
const monitors = new StartedMonitors()

afterEach(() => monitors.stopAll())

const FORMATS = [
  { format: 'hf', file: 'training_args.json' },
  { format: 'deepspeed', file: 'ds_config.json' },
  { format: 'lightning', file: 'lightning_config.yaml' },
] as const

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path, 'utf8')).digest('hex')

describe('rigfit monitor --configs: an OOM relaunch goes through configs exported again (real CLI, fake trainer)', {
  timeout: E2E_TEST_TIMEOUT_MS,
}, () => {
  it.each(FORMATS)(
    '$format: the relaunch reads a new $file with half the micro-batch and the same effective batch',
    async ({ format, file }) => {
      const work = tempDir()
      const exported = await runCli(
        ['export', '--plan', planFixture, '--format', format, '--out', 'run'],
        monitorEnv(work, null),
        work,
      )
      expect(exported.code, exported.stderr).toBe(0)
      const manifest = ExportManifest.parse(
        JSON.parse(readFileSync(join(work, 'run', 'rigfit-export.json'), 'utf8')),
      )
      expect(manifest.exports.map((e) => e.format)).toEqual([format])

      const micro = plan.settings.microBatch
      // Any micro-batch above half the plan's runs out of memory: the plan's own settings fail, the first rung fits.
      const run = monitors.start(
        work,
        `--configs run ${FAST_FLAGS}`,
        `--steps 3 --oom-at-step 1 --oom-above-micro-batch ${micro / 2} --config run/${file}`,
        RTX4090_SCENARIO,
      )
      const { result, records, logDir } = await run.finished
      expect(result.code, result.stderr).toBe(0)
      expect(ofType(records, 'exit').map((e) => e.cause)).toEqual(['gpu-oom', 'success'])

      const starts = trainerEvents(records).filter((e) => e.event === 'start')
      const regenerated = join(logDir, 'attempt-2', 'configs', file)
      expect(starts.map((s) => [s.config, s.microBatch, s.gradAccum])).toEqual([
        [`run/${file}`, micro, plan.settings.gradAccum],
        [regenerated, micro / 2, plan.settings.gradAccum * 2],
      ])
      for (const start of starts) {
        expect((start.microBatch as number) * (start.gradAccum as number) * plan.settings.gpus).toBe(
          plan.settings.effectiveBatch,
        )
      }
      const launches = ofType(records, 'launch')
      expect(launches.map((l) => l.configDir)).toEqual([
        join(work, 'run'),
        join(logDir, 'attempt-2', 'configs'),
      ])
      expect(launches[1]?.command).toContain(regenerated)
      expect(launches[1]?.env.RIGFIT_CONFIG_DIR).toBe(join(logDir, 'attempt-2', 'configs'))
      // The user's exported files are left as they were.
      for (const entry of manifest.exports[0]?.files ?? []) {
        expect(sha256(join(work, 'run', entry.path)), entry.path).toBe(entry.sha256)
      }
    },
  )

  it('rewrites --flag=path arguments and warns when the folder was edited since the export', async () => {
    const work = tempDir()
    const exported = await runCli(
      ['export', '--plan', planFixture, '--format', 'hf', '--out', 'run'],
      monitorEnv(work, null),
      work,
    )
    expect(exported.code, exported.stderr).toBe(0)
    const argsPath = join(work, 'run', 'training_args.json')
    const edited = { ...JSON.parse(readFileSync(argsPath, 'utf8')), logging_steps: 1 }
    writeFileSync(argsPath, JSON.stringify(edited))
    const micro = plan.settings.microBatch
    const run = monitors.start(
      work,
      `--configs run ${FAST_FLAGS}`,
      `--steps 3 --oom-at-step 1 --oom-above-micro-batch ${micro / 2} --config=run/training_args.json`,
      RTX4090_SCENARIO,
    )
    const { result, records, logDir } = await run.finished
    expect(result.code, result.stderr).toBe(0)
    const starts = trainerEvents(records).filter((e) => e.event === 'start')
    expect(starts.map((s) => s.config)).toEqual([
      'run/training_args.json',
      join(logDir, 'attempt-2', 'configs', 'training_args.json'),
    ])
    expect(result.stderr).toMatch(/training_args\.json changed since `rigfit export`/)
  })

  it('refuses a --configs folder that no export wrote, before launching anything', async () => {
    const work = tempDir()
    const { code, stderr } = await runCli(
      ['monitor', '--configs', 'nowhere', '--', process.execPath, '-e', ''],
      monitorEnv(work, null),
      work,
    )
    expect(code).not.toBe(0)
    expect(stderr).toMatch(/nowhere has no rigfit-export\.json/)
    expect(stderr).toMatch(/rigfit export --plan plan\.json --format hf --out nowhere/)
  })
})
