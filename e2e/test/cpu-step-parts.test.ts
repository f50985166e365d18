import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { assertEngines, missingEngines, OPTIONAL, pythonWithTorch, REPO } from './helpers/engines.js'

const python = pythonWithTorch()
const missing = missingEngines('cpu-step-parts', [
  { name: 'python3 with torch (python3-torch)', present: python !== undefined },
])
const SCRIPT = join(REPO, 'examples/calibrate/cpu_step_parts.py')

// GPT-2 small's tensors: token and position embeddings, per block two LayerNorms, the fused QKV and output
// projections and the MLP (weights and biases), then the final LayerNorm.
const EMBEDDINGS = 50257 * 768 + 1024 * 768
const BLOCK = 4 * 768 + 768 * 2304 + 2304 + 768 * 768 + 768 + 768 * 3072 + 3072 + 3072 * 768 + 768
const FINAL_NORM = 2 * 768

describe.skipIf(OPTIONAL && missing.length > 0)('the CPU step parts measured with PyTorch', () => {
  it("times the CPU's AdamW step and in-place and fresh element-wise ops on GPT-2 small's tensors", () => {
    assertEngines(missing)
    const run = spawnSync(
      python ?? 'python3',
      [SCRIPT, '--threads', '1', '--blocks', '1', '--repeats', '1'],
      {
        encoding: 'utf8',
        timeout: 300_000,
      },
    )
    expect(run.status, run.stderr).toBe(0)
    const parts = JSON.parse(run.stdout) as Record<string, unknown>
    expect(parts).toMatchObject({ threads: 1, blocks: 1, parameters: EMBEDDINGS + BLOCK + FINAL_NORM })
    expect(parts.torch).toMatch(/^\d+\.\d+/)
    for (const key of ['adamwStepSeconds', 'inPlaceGBs', 'freshGBs'])
      expect(parts[key], key).toBeGreaterThan(0)
  })

  it('refuses an unknown flag with a usage message', () => {
    const run = spawnSync(python ?? 'python3', [SCRIPT, '--blokcs', '1'], { encoding: 'utf8' })
    expect(run.status).toBe(2)
    expect(run.stderr).toContain('unrecognized arguments: --blokcs')
  })
})
