import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { exportPlan } from '../src/export-plan.js'
import { SLURM_PORT_BASE, SLURM_PORT_SPAN, SLURM_TORCHRUN_FILE } from '../src/formats/slurm.js'
import { loadFixturePlan } from './helpers/fixture-plans.js'

/** The exported script's MASTER_PORT line, run by bash with the given environment. */
function masterPort(script: string, env: Record<string, string>): string {
  const line = script.split('\n').find((l) => l.startsWith('MASTER_PORT='))
  expect(line).toBeDefined()
  const result = spawnSync('bash', ['-c', `${line}\necho "$MASTER_PORT"`], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...env },
  })
  expect(result.status).toBe(0)
  return result.stdout.trim()
}

describe('the SLURM script of a multi-node plan', () => {
  const plan = loadFixturePlan('h100x8-fsdp-2nodes')
  const script = () => {
    const files = exportPlan(plan, { format: 'slurm' }).files
    return files.find((f) => f.path === SLURM_TORCHRUN_FILE)?.content ?? ''
  }

  it('rendezvouses on a port of its own job, so jobs sharing a first node do not collide', () => {
    const ports = ['1', '41', '12345', '99999'].map((id) =>
      Number(masterPort(script(), { SLURM_JOB_ID: id })),
    )
    expect(ports).toEqual([1, 41, 12345, 99999].map((id) => SLURM_PORT_BASE + (id % SLURM_PORT_SPAN)))
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(SLURM_PORT_BASE)
      // Below Linux's ephemeral range, which outgoing connections take their ports from.
      expect(port).toBeLessThan(32768)
    }
  })

  it('keeps a MASTER_PORT the environment sets', () => {
    expect(masterPort(script(), { SLURM_JOB_ID: '7', MASTER_PORT: '31000' })).toBe('31000')
  })
})
