import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { fuzz } from '../src/harness.js'
import { mutatedJson, mutatedText } from '../src/mutate.js'

describe('the fuzz harness counts what it is meant to find', () => {
  it('a target that throws on some inputs is counted as crashing, with the inputs kept', () => {
    const result = fuzz(
      {
        name: 'throws on digits',
        input: mutatedText(['a, 1\nb, 2\n']),
        parse: (text) => {
          if (/\d{3}/.test(text)) throw new Error('three digits')
          return text.length
        },
        check: () => {},
      },
      500,
      1,
    )
    expect(result.inputs).toBe(500)
    expect(result.crashCount).toBeGreaterThan(0)
    expect(result.crashes[0]?.error).toBe('three digits')
  })

  it('an answer its check refuses is a violation, not a crash', () => {
    const result = fuzz(
      {
        name: 'negative numbers pass through',
        input: mutatedJson([JSON.stringify({ vram: 24 })]),
        parse: (text) => {
          try {
            return JSON.parse(text) as unknown
          } catch {
            return null
          }
        },
        check: (answer) => {
          if (
            typeof (answer as { vram?: unknown } | null)?.vram === 'number' &&
            (answer as { vram: number }).vram < 0
          )
            throw new Error('negative vram accepted')
        },
      },
      2000,
      2,
    )
    expect(result.crashCount).toBe(0)
    expect(result.violationCount).toBeGreaterThan(0)
  })

  it('mutations are seeded: the same seed gives the same inputs', () => {
    const sample = (seed: number) => fc.sample(mutatedJson(['{"a":[1,2,{"b":"c"}]}']), { seed, numRuns: 20 })
    expect(sample(5)).toEqual(sample(5))
  })
})
