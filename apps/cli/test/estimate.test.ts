import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { EstimateResult } from '@rigfit/core'
import { describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url))

function rigfit(...args: string[]) {
  const result = spawnSync(process.execPath, [bin, 'estimate', ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

const base = ['--model', 'llama-3.1-8b', '--seq', '2048', '--micro-batch', '1']

describe('rigfit estimate', () => {
  it('--json prints the EstimateResult contract; fit and speed stay null without a device', () => {
    const r = rigfit(...base, '--json')
    expect(r.code).toBe(0)
    const out = EstimateResult.parse(JSON.parse(r.stdout))
    expect(out.params.total).toBe(8_030_261_248)
    expect(out.fits).toBeNull()
    expect(out.capacity).toBeNull()
    expect(out.throughput).toBeNull()
    for (const value of Object.values(out.perDevice)) expect(Number.isInteger(value)).toBe(true)
  })

  it('--vram alone answers whether it fits', () => {
    const small = JSON.parse(rigfit(...base, '--vram', '24', '--json').stdout)
    expect(small).toMatchObject({ fits: false, capacity: 24 * 2 ** 30, throughput: null })
    const lora = JSON.parse(
      rigfit(
        ...base,
        '--lora-rank',
        '16',
        '--quant',
        'nf4',
        '--precision',
        'bf16-true',
        '--grad-ckpt',
        '--vram',
        '24',
        '--json',
      ).stdout,
    )
    expect(lora.fits).toBe(true)
    expect(lora.params.trainable).toBeLessThan(1e8)
  })

  it('--gpu adds the catalog GPU, speed and the fit', () => {
    const r = rigfit(...base, '--gpu', 'A100 80GB', '--gpus', '8', '--sharding', 'fsdp', '--json')
    expect(r.code, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out.capacity).toBeGreaterThan(79 * 2 ** 30)
    expect(out.fits).toBe(true)
    expect(out.throughput.tokensPerSecond).toBeCloseTo(8 * out.throughput.tokensPerSecondPerDevice, 3)
  })

  it('prints a breakdown with the largest term marked and a one-line verdict', () => {
    const r = rigfit(...base, '--vram', '24')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('◀ largest')
    expect(r.stdout).toContain('total (as nvidia-smi shows)')
    expect(r.stdout).toMatch(/✗ Does not fit: needs [\d.]+ GiB of 24.00 GiB/)
    expect(rigfit('--model', 'gpt2', '--seq', '1024', '--micro-batch', '4', '--vram', '24').stdout).toMatch(
      /✓ Fits: .* headroom/,
    )
  })

  it('lists the catalog', () => {
    const out = JSON.parse(rigfit('--list-models', '--json').stdout)
    expect(out.models.map((m: { id: string }) => m.id)).toContain('mixtral-8x7b')
  })

  it('suggests close catalog ids for an unknown model', () => {
    const r = rigfit('--model', 'lama-3.1-8b', '--seq', '2048', '--micro-batch', '1')
    expect(r.code).toBe(3)
    expect(r.stderr).toContain('E_MODEL_UNKNOWN')
    expect(r.stderr).toContain('llama-3.1-8b')
  })

  it('names the field a config.json lacks', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rigfit-estimate-'))
    const file = join(dir, 'config.json')
    writeFileSync(
      file,
      JSON.stringify({ model_type: 'llama', hidden_size: 4096, num_hidden_layers: 32, vocab_size: 32000 }),
    )
    const r = rigfit('--model', file, '--seq', '512', '--micro-batch', '1', '--json')
    expect(r.code).toBe(3)
    const error = JSON.parse(r.stdout).error
    expect(error.code).toBe('E_MODEL_CONFIG')
    expect(error.message).toContain('"num_attention_heads"')
  })

  it('rejects bad flag values with a suggestion', () => {
    const cases: [string[], RegExp][] = [
      [[...base, '--precision', 'fp8'], /fp8/],
      [[...base, '--lora-rank', '8', '--lora-targets', 'q,x'], /"x"/],
      [[...base, '--quant', 'nf4'], /--quant nf4/],
      [[...base, '--lora-targets', 'q'], /--lora-rank/],
      [[...base, '--vram', 'lots'], /--vram "lots"/],
      [['--model', 'gpt2', '--seq', '4096', '--micro-batch', '1'], /1024 positions/],
      [['--model', 'gpt2', '--micro-batch', '1'], /--seq is required/],
    ]
    for (const [args, message] of cases) {
      const r = rigfit(...args)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr, args.join(' ')).toMatch(message)
    }
    const unknownGpu = rigfit(...base, '--gpu', 'Voodoo 5 6000')
    expect(unknownGpu.code).toBe(3)
    expect(unknownGpu.stderr).toContain('E_GPU_UNKNOWN')
  })
})
