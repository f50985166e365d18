import { existsSync, mkdtempSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { matchGpu, suggestGpus } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { bundledCatalogEntries } from './helpers/bundled-plugins.js'
import { rigfit } from './helpers/run-cli.js'

const entries = bundledCatalogEntries()

/**
 * One-character typos of a name at five positions spread over it (first, a third, half, two thirds, last): a
 * character replaced by one that differs, dropped, or a stray letter inserted. Deterministic, so a failure names
 * the exact typo.
 */
function typosOf(name: string): string[] {
  const typos = new Set<string>()
  const n = name.length
  for (const i of new Set([0, Math.floor(n / 3), Math.floor(n / 2), Math.floor((2 * n) / 3), n - 1])) {
    const ch = name[i] as string
    const replacement = /\d/.test(ch) ? String((Number(ch) + 3) % 10) : ch.toLowerCase() === 'q' ? 'z' : 'q'
    typos.add(name.slice(0, i) + replacement + name.slice(i + 1))
    typos.add(name.slice(0, i) + name.slice(i + 1))
    typos.add(`${name.slice(0, i)}k${name.slice(i)}`)
  }
  typos.delete(name)
  return [...typos]
}

/** A typo that still names some GPU is not unknown: matching, not suggestion, handles it. */
function unknown(typo: string): boolean {
  return matchGpu(typo, null, entries) === null
}

describe('close-match suggestions over the bundled GPU catalogs', () => {
  it('suggests every catalog GPU for one-character typos of its name that match nothing', () => {
    let checked = 0
    const misses: string[] = []
    // A one-character typo of a three-character name ("A10" -> "10") is another name as often as a typo.
    for (const entry of entries.filter((e) => e.name.length >= 4)) {
      for (const typo of typosOf(entry.name).filter(unknown)) {
        checked++
        const suggested = suggestGpus(typo, entries)
        // The closest few; more only when that many are exactly as close ("RTX 40q0" is 4060/4070/4080/4090).
        expect(suggested.length).toBeLessThanOrEqual(8)
        if (!suggested.includes(entry))
          misses.push(`"${typo}" -> ${suggested.map((e) => e.name).join(' | ')}`)
      }
    }
    expect(misses).toEqual([])
    expect(checked).toBeGreaterThan(entries.length * 8)
  })

  it('puts the intended GPU first when one character of its model number is a letter lookalike', () => {
    const cases: [string, string][] = [
      ['RTX 4080 Supr', 'GeForce RTX 4080 SUPER'],
      ['RTX 5O90', 'GeForce RTX 5090'],
      ['RTX 3O90 Ti', 'GeForce RTX 3090 Ti'],
      ['MI3OOX', 'Instinct MI300X'],
      ['Arc B58O', 'Intel Arc B580'],
      ['H2OO SXM', 'H200 SXM 141GB'],
    ]
    for (const [typed, expected] of cases) {
      expect(unknown(typed), typed).toBe(true)
      expect(suggestGpus(typed, entries)[0]?.name, typed).toBe(expected)
    }
  })

  it('suggests nothing for a name that shares nothing with any GPU', () => {
    expect(suggestGpus('banana', entries)).toEqual([])
  })
})

describe('an unknown --gpu on the command line', () => {
  const suggestion = (stderr: string) => stderr.match(/Did you mean: ([^?]+)\?/)?.[1]?.split(', ') ?? []

  it('plan names the GPU, suggests the closest catalog names and exits 3 without writing files', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'rigfit-unknown-gpu-'))
    const result = rigfit(
      ['plan', '--gpu', 'RTX 4080 Supr', '--model', 'llama-3.1-8b', '--method', 'lora'],
      cwd,
    )
    expect(result.status).toBe(3)
    expect(result.stderr).toContain('--gpu "RTX 4080 Supr"')
    expect(suggestion(result.stderr)[0]).toBe('GeForce RTX 4080 SUPER')
    expect(result.stdout).toBe('')
    expect(readdirSync(cwd)).toEqual([])
  })

  it('estimate does the same, and --json carries the suggestions as data', () => {
    const args = [
      'estimate',
      '--gpu',
      'RTX 5O90',
      '--model',
      'llama-3.1-8b',
      '--seq',
      '1024',
      '--micro-batch',
      '1',
    ]
    const text = rigfit(args)
    expect(text.status).toBe(3)
    expect(text.stderr).toContain('E_GPU_UNKNOWN')
    expect(text.stderr).toContain('--gpu "RTX 5O90"')
    expect(suggestion(text.stderr)[0]).toBe('GeForce RTX 5090')
    const json = rigfit([...args, '--json'])
    expect(json.status).toBe(3)
    const { error } = JSON.parse(json.stdout)
    expect(error).toMatchObject({ code: 'E_GPU_UNKNOWN', kind: 'input', details: { gpu: 'RTX 5O90' } })
    expect(error.details.closeMatches[0]).toBe('GeForce RTX 5090')
  })

  it('profile --gpu keeps its error code and suggests as well', () => {
    const result = rigfit(['profile', '--gpu', 'Arc B58O', '--json'])
    expect(result.status).toBe(3)
    const { error } = JSON.parse(result.stdout)
    expect(error.code).toBe('E_UNKNOWN_GPU')
    expect(error.details.closeMatches[0]).toBe('Intel Arc B580')
    expect(existsSync(join(process.cwd(), 'Arc B58O'))).toBe(false)
  })
})
