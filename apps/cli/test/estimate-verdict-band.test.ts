import { EstimateResult, FIT_BANDS, MIN_BAND_ROWS } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { rigfit } from './helpers/run-cli.js'

/** One configuration of each kind of run, judged against a 24 GiB device (or four of them). */
const KINDS = {
  full: ['--model', 'gpt2', '--seq', '512'],
  lora: ['--model', 'llama-3.2-1b', '--seq', '512', '--lora-rank', '8'],
  qlora: ['--model', 'llama-3.2-1b', '--seq', '512', '--lora-rank', '8', '--quant', 'nf4'],
  'full-multi-gpu': ['--model', 'gpt2', '--seq', '512', '--gpus', '4', '--sharding', 'fsdp'],
  'lora-multi-gpu': ['--model', 'llama-3.2-1b', '--seq', '512', '--lora-rank', '8', '--gpus', '2'],
  'qlora-multi-gpu': [
    '--model',
    'llama-3.2-1b',
    '--seq',
    '512',
    '--lora-rank',
    '8',
    '--quant',
    'nf4',
    '--gpus',
    '2',
  ],
} as const

describe('rigfit estimate: the verdict band names its n', () => {
  for (const [kind, args] of Object.entries(KINDS)) {
    it(`${kind}: the JSON band and the printed line give the rows behind it, never fewer than ${MIN_BAND_ROWS}`, () => {
      const common = [...args, '--micro-batch', '1', '--vram', '24']
      const json = rigfit(['estimate', ...common, '--json'])
      expect(json.status, json.stderr).toBe(0)
      const c = EstimateResult.parse(JSON.parse(json.stdout)).confidence
      const shipped = FIT_BANDS[kind as keyof typeof FIT_BANDS]
      expect(c).toMatchObject({ kind, rows: shipped.rows, basis: shipped.basis, coverage: shipped.coverage })
      expect(c?.rows).toBeGreaterThanOrEqual(MIN_BAND_ROWS)
      expect(c?.pooled).toBe(shipped.basis !== kind)
      const text = rigfit(['estimate', ...common])
      expect(text.status, text.stderr).toBe(0)
      expect(text.stdout).toContain(`n=${shipped.rows} measured ${shipped.basis} runs, held out by source`)
      expect(text.stdout.includes(`too few ${kind} runs for a band of their own`)).toBe(c?.pooled)
    })
  }
})
