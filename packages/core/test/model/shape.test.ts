import { describe, expect, it } from 'vitest'
import { isRigfitError } from '../../src/errors.js'
import { countParams } from '../../src/model/params.js'
import { generateModelShape } from '../../src/model/shape.js'
import { ModelSpec } from '../../src/schemas/model-spec.js'

describe('generateModelShape', () => {
  // Below ~50M the embedding table dominates and hidden moves in steps of 64, so the fit is coarser.
  it.each([
    [1e7, 0.1],
    [5e7, 0.05],
    [1.24e8, 0.05],
    [3.5e8, 0.05],
    [1e9, 0.05],
    [3e9, 0.05],
    [7e9, 0.05],
    [7e10, 0.05],
  ])('lands near %d parameters (within %d) with a usual shape', (target, tolerance) => {
    const spec = generateModelShape(target)
    expect(() => ModelSpec.parse(spec)).not.toThrow()
    expect(Math.abs(countParams(spec).total / target - 1)).toBeLessThan(tolerance)
    expect([64, 128]).toContain(spec.headDim)
    expect(spec.heads * spec.headDim).toBe(spec.hidden)
    const aspect = spec.hidden / spec.layers
    expect(aspect).toBeGreaterThanOrEqual(32)
    expect(aspect).toBeLessThanOrEqual(160)
    expect(spec.source).toBe('generated')
  })

  it('reproduces GPT-2 small for a GPT-2 style 124M target', () => {
    const spec = generateModelShape(124e6, { family: 'gpt2' })
    expect(spec).toMatchObject({
      layers: 12,
      hidden: 768,
      heads: 12,
      ffn: 3072,
      vocab: 50257,
      mlp: 'gelu',
      tiedEmbeddings: true,
    })
  })

  it('uses SwiGLU at 8/3 x hidden rounded to 256 for Llama-style shapes, and the given vocabulary and context', () => {
    const spec = generateModelShape(1e9, { vocab: 50257, seq: 4096 })
    expect(spec.ffn % 256).toBe(0)
    expect(spec.ffn).toBeGreaterThanOrEqual((8 * spec.hidden) / 3)
    expect(spec.vocab).toBe(50257)
    expect(spec.maxPositions).toBe(4096)
  })

  it('is deterministic and grows with the target', () => {
    expect(generateModelShape(3e8)).toEqual(generateModelShape(3e8))
    expect(countParams(generateModelShape(2e9)).total).toBeGreaterThan(
      countParams(generateModelShape(1e9)).total,
    )
  })

  it('rejects targets it cannot shape', () => {
    for (const bad of [0, -1, Number.NaN, 1e3, 1e13]) {
      try {
        generateModelShape(bad)
        expect.unreachable()
      } catch (error) {
        expect(isRigfitError(error)).toBe(true)
      }
    }
  })

  it('shapes every size from 4M to 1T as people would: head dim 64 or 128, hidden a multiple of 128, usual head counts, GQA from 1B', () => {
    for (let target = 4e6; target <= 1e12; target *= 1.5) {
      const spec = generateModelShape(target)
      const where = `${target.toExponential(2)}: ${spec.layers} x ${spec.hidden}, ${spec.heads}/${spec.kvHeads} heads of ${spec.headDim}`
      expect([64, 128], where).toContain(spec.headDim)
      expect(spec.hidden % 128, where).toBe(0)
      expect(spec.heads * spec.headDim, where).toBe(spec.hidden)
      let odd = spec.heads
      while (odd % 2 === 0) odd /= 2
      expect([1, 3, 5], where).toContain(odd)
      expect(spec.heads % spec.kvHeads, where).toBe(0)
      if (target >= 1e9) expect(spec.kvHeads, where).toBe(8)
      else expect(spec.kvHeads, where).toBe(spec.heads)
      if (target >= 5e7) expect(Math.abs(countParams(spec).total / target - 1), where).toBeLessThan(0.06)
    }
  })
})
