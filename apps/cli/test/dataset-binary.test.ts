import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { rigfit } from './helpers/run-cli.js'

const work = mkdtempSync(join(tmpdir(), 'rigfit-binary-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const planWith = (file: string) =>
  rigfit(['plan', '--gpu', 'RTX 4090', '--model', 'gpt2', '--dataset', file, '--json'])

describe('--dataset of random bytes named .txt', () => {
  it('is counted with a warning that it is not text; a real text is not', () => {
    const binary = join(work, 'random.txt')
    writeFileSync(binary, randomBytes(2 * 1024 * 1024))
    const text = join(work, 'prose.txt')
    writeFileSync(text, 'The quick brown fox jumps over the lazy dog.\n'.repeat(20_000))
    const bad = planWith(binary)
    expect(bad.status).toBe(0)
    expect(bad.stderr).toMatch(/Warning: .*random\.txt: [\d.]+% of its characters are not text/)
    // stdout stays the plan's JSON alone.
    expect(JSON.parse(bad.stdout).workload.dataset.path).toBe(binary)
    const good = planWith(text)
    expect(good.status).toBe(0)
    expect(good.stderr).not.toContain('not text')
  })
})
