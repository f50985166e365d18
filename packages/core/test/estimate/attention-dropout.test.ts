import { describe, expect, it } from 'vitest'
import {
  attentionDropoutBytes,
  attentionDropoutKernels,
  attentionDropsScores,
} from '../../src/estimate/attention-dropout.js'
import { eagerElementwiseBytes } from '../../src/estimate/elementwise.js'
import { estimate } from '../../src/estimate/estimate.js'
import { kernelsPerMicroStep } from '../../src/estimate/kernels.js'
import { validationInput } from '../../src/estimate/validation.js'
import { loadValidationRows } from '../../src/node/validation-dataset.js'
import { EstimateInput } from '../../src/schemas/index.js'

// The RTX 3090 rows of Giles Thomas's GPT-2-shaped model (attn_pdrop 0.1, eager attention), as the dataset states them.
const rows = loadValidationRows().filter((row) => row.source.id === 'gilesthomas-llm-from-scratch')
const ATTENTIONS = ['eager', 'sdpa', 'flash'] as const

describe('dropout on the attention probabilities', () => {
  it('runs only in eager attention, and only where the config sets a dropout', () => {
    for (const attention of ATTENTIONS) {
      for (const attentionDropout of [0, 0.1, 0.5]) {
        const drops = attention === 'eager' && attentionDropout > 0
        expect(attentionDropsScores({ attentionDropout }, attention)).toBe(drops)
        expect(attentionDropoutKernels({ attentionDropout }, attention)).toBe(drops ? 1 : 0)
        expect(attentionDropoutBytes({ attentionDropout, heads: 12 }, attention, 2, 1024) > 0).toBe(drops)
      }
    }
  })

  it('moves a read, a dropped copy and a mask byte per score, growing with heads and sequence', () => {
    for (const heads of [1, 12, 32]) {
      for (const seq of [128, 1024, 4096]) {
        for (const elementBytes of [2, 4]) {
          expect(attentionDropoutBytes({ attentionDropout: 0.1, heads }, 'eager', elementBytes, seq)).toBe(
            heads * seq * (2 * elementBytes + 1),
          )
        }
      }
    }
  })

  it('adds its traffic and its kernel to every stated row, and slows them, but not under SDPA', () => {
    expect(rows.length).toBeGreaterThan(0)
    for (const row of rows) {
      const input = validationInput(row)
      expect(input.attention).toBe('eager')
      expect(input.model.attentionDropout).toBeGreaterThan(0)
      const without = EstimateInput.parse({ ...input, model: { ...input.model, attentionDropout: 0 } })
      const bytes = (i: EstimateInput) =>
        eagerElementwiseBytes(
          i.model,
          { elementBytes: 2, residualBytes: 4, attention: i.attention, lora: null },
          i.seq,
        )
      expect(bytes(input) - bytes(without)).toBeCloseTo(3 * input.model.heads * input.seq * 5, 6)
      expect(kernelsPerMicroStep(input) - kernelsPerMicroStep(without)).toBe(3 * input.model.layers)
      const speed = (i: EstimateInput) => estimate(i).throughput?.tokensPerSecondPerDevice ?? 0
      expect(speed(input)).toBeLessThan(speed(without))
      const sdpa = (i: EstimateInput) => speed(EstimateInput.parse({ ...i, attention: 'sdpa' }))
      expect(sdpa(input)).toBeCloseTo(sdpa(without), 6)
    }
  })
})
