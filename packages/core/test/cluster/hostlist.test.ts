import { describe, expect, it } from 'vitest'
import { expandHostlist } from '../../src/cluster/hostlist.js'

/** Compresses names the way Slurm prints them, one bracket group per prefix and padding; the test's inverse. */
function compress(names: string[]): string {
  const groups = new Map<string, string[]>()
  for (const name of names) {
    const match = /^(.*?)(\d+)$/.exec(name)
    const key = match ? `${match[1]}|${match[2]?.length}` : `${name}|`
    groups.set(key, [...(groups.get(key) ?? []), match?.[2] ?? ''])
  }
  return [...groups.entries()]
    .map(([key, numbers]) => {
      const [prefix] = key.split('|')
      if (numbers[0] === '') return prefix
      const ranges: string[] = []
      let start = numbers[0] as string
      let previous = start
      for (const n of [...numbers.slice(1), null]) {
        if (n !== null && Number(n) === Number(previous) + 1) {
          previous = n
          continue
        }
        ranges.push(start === previous ? start : `${start}-${previous}`)
        if (n !== null) start = previous = n
      }
      return `${prefix}[${ranges.join(',')}]`
    })
    .join(',')
}

describe('expandHostlist', () => {
  it('reads what Slurm prints: ranges with padding, lists, plain names, several groups', () => {
    expect(expandHostlist('gpu[01-03,07],login')).toEqual(['gpu01', 'gpu02', 'gpu03', 'gpu07', 'login'])
    expect(expandHostlist('node1')).toEqual(['node1'])
    expect(expandHostlist('myhost,localhost')).toEqual(['myhost', 'localhost'])
    expect(expandHostlist('r[1-2]n[08-09]')).toEqual(['r1n08', 'r1n09', 'r2n08', 'r2n09'])
    expect(expandHostlist('a[9-11]')).toEqual(['a9', 'a10', 'a11'])
    expect(expandHostlist('')).toEqual([])
  })

  it('expands back every sorted set of node names it is given compressed (a sweep)', () => {
    let seed = 7
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed / 2 ** 31
    }
    for (let trial = 0; trial < 200; trial += 1) {
      const width = 1 + Math.floor(random() * 3)
      const prefixes = ['gpu', 'cpu-', 'n']
      const names: string[] = []
      for (const prefix of prefixes.slice(0, 1 + Math.floor(random() * 3))) {
        for (let n = 0; n < 10 ** width && n < 60; n += 1) {
          if (random() < 0.4) names.push(`${prefix}${String(n).padStart(width, '0')}`)
        }
      }
      if (names.length === 0) continue
      expect(expandHostlist(compress(names))).toEqual(names)
    }
  })

  it('refuses malformed lists instead of guessing', () => {
    for (const bad of ['a[1-2', 'a]1', 'a[x]', 'a[5-3]', 'a[1-1000000]']) {
      expect(() => expandHostlist(bad), bad).toThrow()
    }
  })
})
