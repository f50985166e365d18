import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { RigfitError } from '../src/errors.js'
import { MAX_MEMORY_GIB, parseCount, parseDurationHours, parseGiB, parseSizeBytes } from '../src/units.js'

describe('parseDurationHours', () => {
  it.each([
    ['6h', 6],
    ['90m', 1.5],
    ['2d', 48],
    ['1.5', 1.5],
    ['3600s', 1],
  ])('%s is %d hours', (text, hours) => {
    expect(parseDurationHours(text)).toBeCloseTo(hours)
  })
  it.each(['', 'six hours', '-1h', '0h', '5y'])('refuses %j with a usage error naming the flag', (text) => {
    expect(() => parseDurationHours(text, '--time-budget')).toThrow(RigfitError)
    expect(() => parseDurationHours(text, '--time-budget')).toThrow(/--time-budget/)
  })
})

describe('parseSizeBytes', () => {
  it.each([
    ['500MB', 500e6],
    ['20GiB', 20 * 2 ** 30],
    ['1.5TB', 1.5e12],
    ['1024', 1024],
    ['800M', 800e6],
    ['800m', 800e6],
    ['1.5 TiB', 1.5 * 2 ** 40],
    ['2P', 2e15],
    ['3k', 3000],
  ])('%s is %d bytes', (text, bytes) => {
    expect(parseSizeBytes(text)).toBe(bytes)
  })
  it('refuses a size without a number', () => {
    expect(() => parseSizeBytes('big')).toThrow(/--dataset-size "big"/)
  })
  it.each(['0', '0MB', '-5GB', '5 lots', 'MB', '1.2.3GB', '5XB'])('refuses %j with E_BAD_SIZE', (text) => {
    expect(() => parseSizeBytes(text)).toThrow(expect.objectContaining({ code: 'E_BAD_SIZE' }))
  })
})

describe('parseCount', () => {
  it('reads plain numbers, separators and k/M/B/T suffixes', () => {
    expect(parseCount('50000', '--examples')).toBe(50_000)
    expect(parseCount('50,000', '--examples')).toBe(50_000)
    expect(parseCount('50_000', '--examples')).toBe(50_000)
    expect(parseCount('50k', '--examples')).toBe(50_000)
    expect(parseCount('1.5M', '--dataset-tokens')).toBe(1_500_000)
    expect(parseCount('20B', '--dataset-tokens')).toBe(20_000_000_000)
    expect(parseCount(' 2 t ', '--dataset-tokens')).toBe(2_000_000_000_000)
  })

  it('any whole count written with a suffix reads back as itself', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 999_999 }),
        fc.constantFrom(['', 1], ['k', 1e3], ['M', 1e6], ['B', 1e9]),
        (n, [suffix, factor]) => {
          expect(parseCount(`${n}${suffix}`, '--x')).toBe(n * (factor as number))
        },
      ),
      { seed: 3, numRuns: 500 },
    )
  })

  it.each(['', '0', '-5', '1.2.3', '5 GB', '1e9', '50,00', 'k', '2000T'])(
    'refuses %j naming the flag',
    (text) => {
      expect(() => parseCount(text, '--examples')).toThrow(/--examples/)
    },
  )
})

describe('parseGiB', () => {
  it('takes a positive number of GiB up to a million, the same for --vram and --ram', () => {
    for (const flag of ['--vram', '--ram'] as const) {
      expect(parseGiB('24', flag)).toBe(24)
      expect(parseGiB('15.5', flag)).toBe(15.5)
      expect(parseGiB(String(MAX_MEMORY_GIB), flag)).toBe(MAX_MEMORY_GIB)
      for (const bad of [
        '',
        ' ',
        '0',
        '-8',
        'abc',
        'NaN',
        'Infinity',
        '24GB',
        String(MAX_MEMORY_GIB * 1.01),
      ]) {
        expect(() => parseGiB(bad, flag), `${flag} ${bad}`).toThrow(RigfitError)
        expect(() => parseGiB(bad, flag)).toThrow(`${flag} "${bad}" is not a positive number of GiB`)
      }
    }
  })
})
