import { describe, expect, it } from 'vitest'
import { jsonPath, parseJsonSafely, valueAt } from '../../src/packs/safe-json.js'

const limits = { maxBytes: 1000, maxDepth: 8 }

describe('parseJsonSafely', () => {
  it('parses plain JSON and strips a byte-order mark', () => {
    expect(parseJsonSafely('\uFEFF{"a":[1,2]}', limits)).toEqual({ ok: true, value: { a: [1, 2] } })
  })

  it('refuses prototype keys anywhere, naming their path', () => {
    for (const [text, path] of [
      ['{"__proto__":{"polluted":true}}', '$.__proto__'],
      ['{"rules":[{"event":{"constructor":1}}]}', '$.rules[0].event.constructor'],
      ['{"a":{"prototype":{}}}', '$.a.prototype'],
    ] as const) {
      const result = parseJsonSafely(text, limits)
      expect(result).toMatchObject({ ok: false, code: 'E_PACK_FORBIDDEN_KEY', path })
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('refuses files over the size limit before parsing them', () => {
    expect(parseJsonSafely(`"${'x'.repeat(2000)}"`, limits)).toMatchObject({
      ok: false,
      code: 'E_PACK_TOO_LARGE',
      path: '$',
    })
  })

  it('refuses nesting past the depth limit, even far past it', () => {
    expect(parseJsonSafely('[[[[[[[[[[1]]]]]]]]]]', limits)).toMatchObject({
      ok: false,
      code: 'E_PACK_TOO_DEEP',
    })
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`
    expect(parseJsonSafely(deep, { maxBytes: 1_000_000, maxDepth: 32 })).toMatchObject({ ok: false })
  })

  it('reports syntax errors as typed problems', () => {
    expect(parseJsonSafely('{"a":', limits)).toMatchObject({ ok: false, code: 'E_PACK_JSON', path: '$' })
  })
})

describe('jsonPath and valueAt', () => {
  it('writes paths the way a reader finds the key', () => {
    expect(jsonPath(['conditions', 'all', 0, 'fact'])).toBe('$.conditions.all[0].fact')
    expect(jsonPath(['odd key', 2])).toBe('$["odd key"][2]')
  })

  it('reads own properties only', () => {
    expect(valueAt({ a: [{ b: 3 }] }, ['a', 0, 'b'])).toBe(3)
    expect(valueAt({}, ['toString'])).toBeUndefined()
  })
})
