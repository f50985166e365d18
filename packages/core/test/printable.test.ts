import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isPrintable, printable, printableKeepingColour, printableLine } from '../src/printable.js'

// Any control character at all, with the escape-sequence openers over-represented.
const hostile = fc.string({
  unit: fc.oneof(
    fc.constantFrom('\u001b', '\u0007', '\r', '\n', '\t', '\u009b', '\u202e', '[', ']', '2J', '0;', 'm'),
    fc.integer({ min: 0, max: 0x2100 }).map((code) => String.fromCodePoint(code)),
  ),
  maxLength: 60,
})

describe('printable', () => {
  it('leaves no character that acts on a terminal, and only adds escapes', () => {
    fc.assert(
      fc.property(hostile, (text) => {
        const out = printable(text)
        expect(isPrintable(out)).toBe(true)
        if (isPrintable(text)) expect(out).toBe(text)
        expect(out.length).toBeGreaterThanOrEqual(text.length)
      }),
      { seed: 7, numRuns: 2000 },
    )
  })

  it('one line: newlines and tabs escaped too', () => {
    fc.assert(
      fc.property(hostile, (text) => {
        expect(printableLine(text)).not.toMatch(/[\n\t]/)
        expect(isPrintable(printableLine(text))).toBe(true)
      }),
      { seed: 8, numRuns: 2000 },
    )
    expect(printableLine('\u001b]0;PWNED\u0007\r\nFAKE')).toBe('\\x1b]0;PWNED\\x07\\r\\nFAKE')
  })

  it('escapes the renditions that hide or disguise text: blink, reverse, conceal', () => {
    for (const code of ['5', '6', '7', '8', '5;31', '31;8', '38;5;196'])
      expect(printableKeepingColour(`\u001b[${code}mx`)).toBe(`\\x1b[${code}mx`)
    for (const code of ['', '0', '1', '4', '31', '1;32', '39', '97'])
      expect(printableKeepingColour(`\u001b[${code}mx`)).toBe(`\u001b[${code}mx`)
  })

  it("keeps rigfit's own colours and escapes every other sequence", () => {
    expect(printableKeepingColour('\u001b[1;32mok\u001b[0m \u001b[2J\u001b]0;t\u0007')).toBe(
      '\u001b[1;32mok\u001b[0m \\x1b[2J\\x1b]0;t\\x07',
    )
    fc.assert(
      fc.property(hostile, (text) => {
        const out = printableKeepingColour(text)
        // Whatever ESC is left opens a colour sequence and nothing else.
        // biome-ignore lint/suspicious/noControlCharactersInRegex: finding escape characters is the point
        for (const at of out.matchAll(/\u001b/g)) {
          // biome-ignore lint/suspicious/noControlCharactersInRegex: an SGR sequence starts with ESC
          expect(out.slice(at.index)).toMatch(/^\u001b\[[0-9;]{0,32}m/)
        }
      }),
      { seed: 9, numRuns: 2000 },
    )
  })
})
