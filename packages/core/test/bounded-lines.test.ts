import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { BoundedLines } from '../src/bounded-lines.js'

function split(chunks: string[], max: number): [string, boolean][] {
  const out: [string, boolean][] = []
  const lines = new BoundedLines(max, (line, cut) => out.push([line, cut]))
  for (const chunk of chunks) lines.push(chunk)
  lines.flush()
  return out
}

describe('BoundedLines', () => {
  it('gives the same lines as a split on newlines, however the text is chunked, for lines within the bound', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 20 })), fc.integer({ min: 1, max: 7 }), (parts, size) => {
        const text = parts.join('\n')
        const chunks: string[] = []
        for (let at = 0; at < text.length; at += size) chunks.push(text.slice(at, at + size))
        const expected = text === '' ? [] : text.split('\n')
        if (text.endsWith('\n')) expected.pop()
        expect(split(chunks, 64).map(([line]) => line)).toEqual(expected)
      }),
    )
  })

  it('cuts a long line at the bound and drops the rest of it, without holding more than the bound', () => {
    const out = split(['ab', 'cdefgh', 'ij\nkl', 'm\n', 'x'.repeat(100)], 4)
    expect(out).toEqual([
      ['abcd', true],
      ['klm', false],
      ['xxxx', true],
    ])
  })
})
