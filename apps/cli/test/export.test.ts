import { spawnSync } from 'node:child_process'
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeEach, describe, expect, it } from 'vitest'
import { workspaceFixture } from './helpers/workspace-fixtures.js'

const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const fixture = (name: string) => workspaceFixture('@rigfit/exporters', 'plans', `${name}.json`)

function rigfit(...args: string[]) {
  const result = spawnSync(process.execPath, [bin, 'export', ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rigfit-export-'))
})

describe('rigfit export', () => {
  it('--json prints files, warnings, streaming and cache', async () => {
    const r = rigfit(
      '--plan',
      fixture('a100x4-zero2'),
      '--format',
      'deepspeed',
      '--dataset-size',
      '20GB',
      '--json',
    )
    expect(r.code).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out.files.map((f: { path: string }) => f.path)).toEqual([
      'ds_config.json',
      'launch_deepspeed.sh',
      'rigfit-plan.json',
      'rigfit-stack.json',
    ])
    const plan = JSON.parse(await readFile(fixture('a100x4-zero2'), 'utf8'))
    expect(JSON.parse(out.files[0].content).train_batch_size).toBe(plan.settings.effectiveBatch)
    expect(out.streaming).toMatchObject({
      mode: 'pre-download',
      datasetBytes: 20e9,
      datasetBytesSource: 'flag',
    })
    expect(out.cache.tier).toBe('ram')
    expect(Array.isArray(out.warnings)).toBe(true)
  })

  it('prints files with headers without --out', () => {
    const r = rigfit('--plan', fixture('t4-fp16'), '--format', 'kconfig')
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^==> tesla_t4_conservative_defconfig <==\n/)
    expect(r.stdout).toContain('CONFIG_BATCH_SIZE=8')
    expect(r.stderr).toContain('Dataset: pre-download')
  })

  it('writes atomically and refuses to overwrite without --force', async () => {
    expect(
      rigfit('--plan', fixture('rtx4090-bf16'), '--format', 'torchrun', '--nodes', '2', '--out', dir).code,
    ).toBe(0)
    const script = join(dir, 'launch_torchrun.sh')
    // The underscore spelling every torch from 1.13 to 2.x accepts.
    expect(await readFile(script, 'utf8')).toContain('--rdzv_backend=c10d')
    await writeFile(script, 'mine')
    const again = rigfit('--plan', fixture('rtx4090-bf16'), '--format', 'torchrun', '--out', dir)
    expect(again.code).toBe(8)
    expect(again.stderr).toMatch(/Error \[E_EXISTS\]: refusing to overwrite/)
    expect(again.stderr).toMatch(/Suggestion: Pass --force/)
    expect(await readFile(script, 'utf8')).toBe('mine')
    expect(
      rigfit('--plan', fixture('rtx4090-bf16'), '--format', 'torchrun', '--out', dir, '--force').code,
    ).toBe(0)
    expect(await readFile(script, 'utf8')).toContain('--standalone')
  })

  it('refuses an inconsistent plan, writing nothing', async () => {
    const plan = JSON.parse(await readFile(fixture('t4-fp16'), 'utf8'))
    plan.settings.precision = 'bf16-mixed'
    const path = join(dir, 'bad.json')
    await writeFile(path, JSON.stringify(plan))
    const out = join(dir, 'out')
    const r = rigfit('--plan', path, '--format', 'hf', '--out', out)
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/E_PLAN_INCONSISTENT.*bf16 needs compute capability 8\.0/)
    expect(await readdir(dir)).toEqual(['bad.json'])
  })

  it('reports bad input with distinct exit codes', () => {
    expect(rigfit('--plan', join(dir, 'missing.json'), '--format', 'hf').code).toBe(3)
    expect(rigfit('--plan', fixture('cpu-2core'), '--format', 'deepspeed').stderr).toMatch(
      /E_FORMAT_UNSUPPORTED/,
    )
    const size = rigfit('--plan', fixture('cpu-2core'), '--format', 'hf', '--dataset-size', 'lots')
    expect(size.code).toBe(2)
    expect(size.stderr).toMatch(/--dataset-size "lots" is not a size/)
    const json = rigfit('--plan', fixture('m2-mps'), '--format', 'hf', '--nodes', '2', '--json')
    expect(json.code).toBe(4)
    expect(JSON.parse(json.stdout).error.code).toBe('E_NODES_MPS')
  })
})
