import { describe, expect, it } from 'vitest'
import { parsePythonLiteral } from '../../src/metrics/python-literal.js'

describe('parsePythonLiteral', () => {
  it('reads the dict Hugging Face Trainer prints', () => {
    expect(
      parsePythonLiteral("{'loss': 2.31, 'grad_norm': 1.25, 'learning_rate': 4e-05, 'epoch': 0.5}"),
    ).toEqual({
      loss: 2.31,
      grad_norm: 1.25,
      learning_rate: 4e-5,
      epoch: 0.5,
    })
  })

  it('reads numpy and torch scalars, booleans, None, nan and nested values', () => {
    const value = parsePythonLiteral(
      "{'loss': np.float64(2.0), 'g': tensor(1.5, device='cuda:0'), 'ok': True, 'x': None, 'n': nan, 'l': [1, (2, 3)], \"s\": 'a\\'b'}",
    ) as Record<string, unknown>
    expect(value.loss).toBe(2)
    expect(value.g).toBe(1.5)
    expect(value.ok).toBe(true)
    expect(value.x).toBeNull()
    expect(Number.isNaN(value.n)).toBe(true)
    expect(value.l).toEqual([1, [2, 3]])
    expect(value.s).toBe("a'b")
  })

  it('answers undefined for what is not a literal, and ignores __proto__ keys', () => {
    expect(parsePythonLiteral("{'loss': 2.3")).toBeUndefined()
    expect(parsePythonLiteral("{'a': os.system('x') + 1}")).toBeUndefined()
    expect(parsePythonLiteral('{1 2}')).toBeUndefined()
    const value = parsePythonLiteral("{'__proto__': {'polluted': 1}}") as Record<string, unknown>
    expect(Object.keys(value)).toEqual([])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })
})
