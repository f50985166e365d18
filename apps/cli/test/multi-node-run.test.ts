import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { MonitorRecord } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { rigfit, rigfitJson } from './helpers/run-cli.js'

/** A trainer that prints two metrics lines, as examples/pytorch/train.py does. */
const TRAINER = [
  'for (const step of [1, 2]) console.log(JSON.stringify({ step, total_steps: 2, loss: 3 - step, tokens: 64 * step, tokens_per_second: 100, lr: 0.001 }))',
].join('\n')

describe('rigfit monitor on the nodes of one Slurm job', () => {
  it('records each node into the same folder, one log per node, and report --run shows every node', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rigfit-multi-node-'))
    const runDir = join(dir, 'run')
    const nodes = ['gpu01', 'gpu02']
    for (const node of nodes) {
      const env = { SLURM_JOB_ID: '99', SLURM_JOB_NUM_NODES: '2', SLURMD_NODENAME: node }
      const run = rigfit(
        ['monitor', '--quiet', '--log-dir', runDir, '--', process.execPath, '-e', TRAINER],
        dir,
        env,
      )
      expect(run.status, run.stderr).toBe(0)
    }
    expect(
      readdirSync(runDir)
        .filter((f) => f.endsWith('.jsonl'))
        .sort(),
    ).toEqual(['monitor-gpu01.jsonl', 'monitor-gpu02.jsonl'])
    for (const node of nodes) {
      const records = readFileSync(join(runDir, `monitor-${node}.jsonl`), 'utf8')
        .trim()
        .split('\n')
        .map((line) => MonitorRecord.parse(JSON.parse(line)))
      expect(records.find((r) => r.type === 'summary')).toMatchObject({ outcome: 'completed', lastStep: 2 })
    }
    const report = rigfitJson(['report', '--run', runDir, '--out', join(dir, 'run.html')], dir)
    expect(report.kinds).toEqual(['run'])
    const html = readFileSync(join(dir, 'run.html'), 'utf8')
    for (const node of nodes) {
      expect(html).toContain(`Run on node ${node}`)
      expect(html).toContain(`id="run-${node}-loss`)
    }

    // A one-node job (or no job) keeps the single monitor.jsonl.
    const single = join(dir, 'single')
    const one = rigfit(
      ['monitor', '--quiet', '--log-dir', single, '--', process.execPath, '-e', TRAINER],
      dir,
      {
        SLURM_JOB_ID: '100',
        SLURM_JOB_NUM_NODES: '1',
        SLURMD_NODENAME: 'gpu01',
      },
    )
    expect(one.status, one.stderr).toBe(0)
    expect(existsSync(join(single, 'monitor.jsonl'))).toBe(true)
  }, 120_000)
})
