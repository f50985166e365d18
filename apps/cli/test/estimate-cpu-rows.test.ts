import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { EstimateResult, evaluateValidationRow, parseValidationRow } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { rigfit } from './helpers/run-cli.js'

const validation = new URL('../../../packages/core/validation/', import.meta.url)
const rows = readFileSync(new URL('calibrate-cpu-amd-epyc.jsonl', validation), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line, index) => parseValidationRow(JSON.parse(line), `calibrate-cpu-amd-epyc.jsonl:${index + 1}`))
// The `rigfit profile --benchmark` of the machine the rows were measured on.
const profile = fileURLToPath(new URL('calibrate-cpu-amd-epyc.profile.json', validation))

describe('the CPU validation rows', () => {
  it('read as `rigfit estimate --from` the measured machine’s profile predicts them, with the row’s flags and stack', () => {
    expect(rows.length).toBeGreaterThanOrEqual(4)
    for (const row of rows) {
      if (!('catalog' in row.model)) throw new Error(`${row.id}: a CPU row names a catalog model`)
      const s = row.settings
      const run = rigfit([
        'estimate',
        '--from',
        profile,
        '--stack',
        row.stack,
        '--model',
        row.model.catalog,
        '--seq',
        String(s.seq),
        '--micro-batch',
        String(s.microBatch),
        '--grad-accum',
        String(s.gradAccum ?? 1),
        '--precision',
        s.precision ?? 'bf16-mixed',
        '--no-calibration',
        '--json',
      ])
      expect(run.status, run.stderr).toBe(0)
      const result = EstimateResult.parse(JSON.parse(run.stdout))
      const cli = result.throughput?.tokensPerSecondPerDevice ?? Number.NaN
      const scored = evaluateValidationRow(row).predicted
      expect(Math.abs(cli / scored - 1), row.id).toBeLessThan(1e-9)
    }
  })
})
