import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ProbeContext } from '../../src/probe-runner.js'
import { bootFactsPath, currentBootKey, readBootFacts } from '../../src/system/boot-facts.js'
import { runSystemInformation } from '../../src/system/systeminformation.js'

const folders: string[] = []
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true })
})

function cacheHome(): string {
  const folder = mkdtempSync(join(tmpdir(), 'rigfit-boot-facts-'))
  folders.push(folder)
  return folder
}

/** Real systeminformation, asked through the profiler's worker, with the given environment. */
async function ask(functions: string[], env: NodeJS.ProcessEnv) {
  const ctx = new ProbeContext({ timeoutMs: 20_000, env: { ...process.env, ...env } })
  const results = await runSystemInformation(ctx, functions)
  return { results, ctx, sources: ctx.raw.map((raw) => raw.source) }
}

const workerRan = (sources: string[], functions: string[]) =>
  sources.includes(`systeminformation ${functions.join(' ')}`)

describe("systeminformation's answers kept for the boot", () => {
  it('asks once per boot for what cannot change, and gives the same answers back', async () => {
    const env = { XDG_CACHE_HOME: cacheHome() }
    const first = await ask(['cpu', 'system'], env)
    expect(workerRan(first.sources, ['cpu', 'system'])).toBe(true)
    expect(first.results.cpu).toBeTypeOf('object')
    const kept = JSON.parse(readFileSync(bootFactsPath(env), 'utf8'))
    expect(Object.keys(kept.results).sort()).toEqual(['cpu', 'system'])

    const second = await ask(['cpu', 'system'], env)
    expect(workerRan(second.sources, ['cpu', 'system'])).toBe(false)
    expect(second.sources).toContain(
      `systeminformation cpu system (kept for this boot in ${bootFactsPath(env)})`,
    )
    expect(second.results).toEqual(first.results)
    expect(second.ctx.records).toEqual([expect.objectContaining({ name: 'systeminformation', ok: true })])
  }, 60_000)

  it('always asks afresh for what changes (memory), and keeps none of it', async () => {
    const env = { XDG_CACHE_HOME: cacheHome() }
    for (let run = 0; run < 2; run++) expect(workerRan((await ask(['mem'], env)).sources, ['mem'])).toBe(true)
    expect(() => readFileSync(bootFactsPath(env))).toThrow()
  }, 60_000)

  it('asks again where PATH differs: the answers come from the tools found on it', async () => {
    const env = { XDG_CACHE_HOME: cacheHome() }
    await ask(['system'], env)
    const other = await ask(['system'], { ...env, PATH: `${cacheHome()}:${process.env.PATH}` })
    expect(workerRan(other.sources, ['system'])).toBe(true)
  }, 60_000)

  it('reads nothing kept for another boot, host or systeminformation release', async () => {
    const env = { XDG_CACHE_HOME: cacheHome() }
    await ask(['system'], env)
    const key = await currentBootKey({ ...process.env, ...env })
    expect(Object.keys(await readBootFacts(bootFactsPath(env), key))).toEqual(['system'])
    const others = [
      { ...key, bootId: 'another-boot', bootTimeS: key.bootTimeS - 3600 },
      { ...key, hostname: `${key.hostname}-other` },
      { ...key, systeminformation: '0.0.1' },
      { ...key, cpus: `1 × ${key.cpus}` },
    ]
    for (const other of others) expect(await readBootFacts(bootFactsPath(env), other)).toEqual({})
  }, 60_000)

  it.each([
    ['not JSON', '{"key": '],
    ['no results', '{"key": {}}'],
    ['a dynamic answer smuggled in', null],
  ])(
    'ignores a kept file that is %s and asks again',
    async (_, text) => {
      const env = { XDG_CACHE_HOME: cacheHome() }
      await ask(['system'], env)
      const path = bootFactsPath(env)
      const kept = JSON.parse(readFileSync(path, 'utf8'))
      writeFileSync(path, text ?? JSON.stringify({ key: kept.key, results: { mem: { total: 1 } } }))
      const again = await ask(text === null ? ['system', 'mem'] : ['system'], env)
      expect(workerRan(again.sources, text === null ? ['system', 'mem'] : ['system'])).toBe(true)
      expect(Object.keys(JSON.parse(readFileSync(path, 'utf8')).results)).toEqual(['system'])
    },
    60_000,
  )

  it('keeps nothing with RIGFIT_NO_CACHE set, and profiles whole where the folder cannot be written', async () => {
    const off = { XDG_CACHE_HOME: cacheHome(), RIGFIT_NO_CACHE: '1' }
    for (let run = 0; run < 2; run++)
      expect(workerRan((await ask(['system'], off)).sources, ['system'])).toBe(true)
    expect(() => readFileSync(bootFactsPath(off))).toThrow()

    const blocked = join(cacheHome(), 'a-file')
    writeFileSync(blocked, '')
    const answer = await ask(['system'], { XDG_CACHE_HOME: blocked })
    expect(answer.results.system).toBeTypeOf('object')
    expect(answer.ctx.records).toEqual([expect.objectContaining({ name: 'systeminformation', ok: true })])
    expect(answer.ctx.raw.find((raw) => raw.source.startsWith('keep this boot'))?.ok).toBe(false)
  }, 60_000)
})
