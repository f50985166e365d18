import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url))

describe('a plan refused for host RAM says so', () => {
  it('--sharding zero3 --offload all on a T4 names host RAM, the binding limit, not the GPU', () => {
    const args = [
      'plan',
      '--mode',
      'balanced',
      '--gpu',
      'Tesla T4',
      '--model',
      'qwen2.5-1.5b',
      '--method',
      'full',
    ]
    const refused = spawnSync(
      process.execPath,
      [bin, ...args, '--sharding', 'zero3', '--offload', 'all', '--json'],
      {
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1' },
      },
    )
    expect(refused.status).toBe(10)
    const error = (JSON.parse(refused.stdout) as { error: { message: string } }).error
    expect(error.message).toMatch(
      /need at least [\d.]+ GiB of it; rigfit may use [\d.]+ GiB of this machine's RAM/,
    )
    // With the RAM it needs, the same request fits: the GPU was never the limit.
    const fits = spawnSync(
      process.execPath,
      [bin, ...args, '--sharding', 'zero3', '--offload', 'all', '--ram', '256', '--json'],
      { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
    )
    expect(fits.status).toBe(0)
  })
})
