import { describe, expect, it } from 'vitest'
import { grouped } from '../src/lib/format.js'

describe('grouped', () => {
  it("writes every number as toLocaleString('en-US') does", () => {
    const values = [0, -0, 1, -1, 12, 999, 1000, -1000, 9999, 10000, 123456, 1234567, -1234567, 1e15, -1e15]
    values.push(
      Number.MAX_SAFE_INTEGER,
      -Number.MAX_SAFE_INTEGER,
      2 ** 53,
      1e21,
      1e22,
      0.5,
      1234.5678,
      -987654.321,
    )
    values.push(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY)
    // Powers of ten and their neighbours, where a comma appears, and a spread of magnitudes.
    for (let power = 0; power <= 16; power++) values.push(10 ** power - 1, 10 ** power, 10 ** power + 1)
    let seed = 7
    for (let i = 0; i < 5000; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      values.push(Math.round((seed / 2 ** 31 - 0.5) * 10 ** (i % 17)))
    }
    for (const value of values) expect(grouped(value), String(value)).toBe(value.toLocaleString('en-US'))
  })
})
