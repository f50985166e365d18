import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { writeLoadRecorder } from './helpers/record-loads.js'

// rigfit --version and --help answer from the help oclif rendered at build time (bundle/help.json) without
// loading oclif; where the answer could differ from oclif's (user plugins, forced colour or width) oclif runs.
// Each answer is compared with oclif's own, which runs when the data folder holds a package.json (where oclif
// reads user and linked plugins from), here one naming none.

const cli = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const snapshot = JSON.parse(readFileSync(new URL('../bundle/help.json', import.meta.url), 'utf8')) as {
  help: Record<string, string>
}
const work = mkdtempSync(join(tmpdir(), 'rigfit-fast-start-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const emptyData = join(work, 'empty-data')
const oclifData = join(work, 'oclif-data')
mkdirSync(join(oclifData, 'rigfit'), { recursive: true })
writeFileSync(join(oclifData, 'rigfit', 'package.json'), '{}\n')

const hook = writeLoadRecorder(work)

/** Runs rigfit with the given data folder; returns its output and the bundle files it loaded. */
function run(args: string[], dataHome: string, env: NodeJS.ProcessEnv = {}) {
  const record = join(work, `loads-${Math.random().toString(36).slice(2)}.txt`)
  writeFileSync(record, '')
  const base = { ...process.env }
  for (const name of ['FORCE_COLOR', 'OCLIF_COLUMNS', 'RIGFIT_DATA_DIR']) delete base[name]
  const result = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, cli, ...args], {
    encoding: 'utf8',
    cwd: work,
    env: { ...base, XDG_DATA_HOME: dataHome, RIGFIT_TEST_LOADS: record, ...env },
  })
  const loaded = readFileSync(record, 'utf8')
    .trim()
    .split('\n')
    .filter((url) => url.includes('/bundle/'))
    .map((url) => url.split('/bundle/')[1])
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, loaded }
}

const argvs = Object.keys(snapshot.help).map((key) => (key === '' ? [] : key.split(' ')))

describe('rigfit --version and --help without oclif', () => {
  it('records the help of rigfit, every command, alias and topic', () => {
    expect(argvs).toContainEqual(['--help'])
    expect(argvs).toContainEqual(['estimate', '--help'])
    expect(argvs).toContainEqual(['rules', 'list', '--help'])
    expect(argvs).toContainEqual(['rules', '--help'])
    expect(argvs).toContainEqual(['plugins', 'install', '--help'])
  })

  it.each(['--version', ...argvs.map((argv) => argv.join(' '))])(
    '`rigfit %s` prints what oclif prints, loading only the fast start',
    (line) => {
      const args = line === '' ? [] : line.split(' ')
      const fast = run(args, emptyData)
      const oclif = run(args, oclifData)
      expect(fast.status, fast.stderr).toBe(0)
      expect(fast.loaded).toEqual(['fast-start.js'])
      expect(oclif.loaded).toContain('main.js')
      expect(fast.stdout).toBe(oclif.stdout)
      expect(fast.stderr).toBe(oclif.stderr)
    },
  )

  it('leaves to oclif what it has no recorded answer for, or where the answer could differ', () => {
    for (const [args, env] of [
      [['estimate', '--json', '--help'], {}],
      [['help'], {}],
      [['--help'], { FORCE_COLOR: '1' }],
      [['--help'], { OCLIF_COLUMNS: '120' }],
      [['--version'], { RIGFIT_DATA_DIR: join(oclifData, 'rigfit') }],
    ] as const) {
      const result = run([...args], emptyData, env)
      expect(result.status, `${args.join(' ')} ${JSON.stringify(env)}: ${result.stderr}`).toBe(0)
      expect(result.loaded, `${args.join(' ')} ${JSON.stringify(env)}`).toContain('main.js')
    }
    // oclif's answer under a forced width or colour is its own, not the recorded one.
    const recorded = run(['estimate', '--help'], emptyData).stdout
    expect(run(['estimate', '--help'], emptyData, { OCLIF_COLUMNS: '120' }).stdout).not.toBe(recorded)
    expect(run(['estimate', '--help'], emptyData, { FORCE_COLOR: '1' }).stdout).not.toBe(recorded)
  })
})
