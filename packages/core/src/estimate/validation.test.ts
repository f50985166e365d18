import { readdirSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { countParams } from '../model/params.js'
import type { ValidationRow } from '../schemas/index.js'
import {
  evaluateValidationRow,
  parseValidationRow,
  renderValidationTable,
  summarizeValidation,
  VALIDATION_BOUNDS,
  type ValidationOutcome,
  validationInput,
} from './validation.js'

const dir = new URL('../../validation/', import.meta.url)
const rows: ValidationRow[] = readdirSync(dir)
  .filter((file) => file.endsWith('.jsonl'))
  .sort()
  .flatMap((file) =>
    readFileSync(new URL(file, dir), 'utf8')
      .split('\n')
      .map((line, index) => ({ line, where: `${file}:${index + 1}` }))
      .filter(({ line }) => line.trim() !== '')
      .map(({ line, where }) => parseValidationRow(JSON.parse(line), where)),
  )

describe('validation dataset', () => {
  const outcomes = rows.map(evaluateValidationRow)

  it('holds at least 30 distinct measured configurations with their sources', () => {
    expect(rows.length).toBeGreaterThanOrEqual(30)
    expect(new Set(rows.map((r) => r.id)).size).toBe(rows.length)
    for (const row of rows) expect(row.source.says.length, row.id).toBeGreaterThan(10)
  })

  it('spans 100M to 70B parameters, full/LoRA/QLoRA, every precision family, checkpointing and several GPUs', () => {
    const sizes = rows.map((r) => countParams(validationInput(r).model).total)
    expect(Math.min(...sizes)).toBeLessThanOrEqual(1.5e8)
    expect(Math.max(...sizes)).toBeGreaterThanOrEqual(6e10)
    expect(rows.some((r) => r.settings.lora && r.settings.quant === 'nf4')).toBe(true)
    expect(rows.some((r) => r.settings.lora && (r.settings.quant ?? 'none') === 'none')).toBe(true)
    expect(rows.some((r) => !r.settings.lora)).toBe(true)
    for (const precision of ['fp32', 'fp16-mixed', 'bf16-mixed', 'bf16-true']) {
      expect(
        rows.some((r) => r.settings.precision === precision),
        precision,
      ).toBe(true)
    }
    expect(rows.some((r) => r.settings.gradCheckpointing)).toBe(true)
    expect(rows.some((r) => (r.settings.gpus ?? 1) > 1)).toBe(true)
  })

  it(`keeps memory within ${VALIDATION_BOUNDS.memoryMedian * 100}% median and speed within ${VALIDATION_BOUNDS.speedMedian * 100}% median error`, () => {
    // The table the documentation shows; printed so a run shows where the model stands.
    console.log(`\n${renderValidationTable(outcomes)}\n`)
    const summary = summarizeValidation(outcomes)
    const memory = summary.find((s) => (s.metric as string) === 'memory')
    const speed = summary.find((s) => s.metric === 'tokens_per_second')
    expect(memory?.medianAbsError).toBeLessThanOrEqual(VALIDATION_BOUNDS.memoryMedian)
    expect(memory?.worstAbsError).toBeLessThanOrEqual(VALIDATION_BOUNDS.memoryWorst)
    expect(speed?.medianAbsError).toBeLessThanOrEqual(VALIDATION_BOUNDS.speedMedian)
    expect(speed?.worstAbsError).toBeLessThanOrEqual(VALIDATION_BOUNDS.speedWorst)
  })
})

describe('validation summary', () => {
  const fake = (id: string, metric: ValidationOutcome['metric'], error: number) =>
    ({
      id,
      metric,
      error,
      measured: 1,
      predicted: 1 + error,
      row: rows[0] as ValidationRow,
    }) as ValidationOutcome

  it('takes the median and the worst absolute error per metric and over all memory metrics', () => {
    const summary = summarizeValidation([
      fake('a', 'nvidia-smi', 0.1),
      fake('b', 'nvidia-smi', -0.3),
      fake('c', 'max_memory_allocated', 0.02),
      fake('d', 'tokens_per_second', -0.5),
    ])
    const by = (m: string) => summary.find((s) => s.metric === m)
    expect(by('nvidia-smi')).toMatchObject({
      count: 2,
      medianAbsError: 0.2,
      worstAbsError: 0.3,
      worstId: 'b',
    })
    expect(by('memory')).toMatchObject({ count: 3, medianAbsError: 0.1, worstId: 'b' })
    expect(by('tokens_per_second')).toMatchObject({ count: 1, worstAbsError: 0.5 })
  })

  it('rejects a malformed row naming where it is', () => {
    expect(() => parseValidationRow({ id: 'x' }, 'rows.jsonl:3')).toThrow(/rows.jsonl:3/)
  })
})
