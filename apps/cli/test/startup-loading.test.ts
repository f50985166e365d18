import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { writeLoadRecorder } from './helpers/record-loads.js'
import { ESTIMATE_ARGS } from './helpers/run-cli.js'

// A command loads only what it runs: the manifest answers --help without any command module, and the heavy
// parts (vega for reports, the dataset readers, the exporters, the monitor) load only for the commands and
// flags that use them. A loader hook records every file the CLI loads; the bundle's chunks name the package each
// piece of code came from in a comment (`// ../../packages/dataset/dist/...`), which says what a file holds.

const cli = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const work = mkdtempSync(join(tmpdir(), 'rigfit-startup-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const hook = writeLoadRecorder(work)

interface Loads {
  commands: string[]
  /** Whether the loaded files hold code from a path (`packages/core/`, `node_modules/vega`), by the bundle's module comments. */
  holds: (part: string) => boolean
}

function loadsOf(args: string[]): Loads {
  const record = join(work, `loads-${Math.random().toString(36).slice(2)}.txt`)
  writeFileSync(record, '')
  const result = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, cli, ...args], {
    encoding: 'utf8',
    cwd: work,
    env: { ...process.env, NO_COLOR: '1', RIGFIT_TEST_LOADS: record, XDG_CONFIG_HOME: join(work, 'config') },
  })
  expect(result.status, result.stderr).toBe(0)
  const files = [...new Set(readFileSync(record, 'utf8').trim().split('\n'))].map((url) => fileURLToPath(url))
  const text = files.map((file) => readFileSync(file, 'utf8')).join('\n')
  return {
    commands: files
      .filter((file) => file.includes('/bundle/commands/'))
      .map((file) => file.split('/bundle/')[1] as string),
    holds: (part) => text.includes(`/${part}`),
  }
}

const estimate = [...ESTIMATE_ARGS]
const heavy = [
  'packages/report/',
  'node_modules/vega',
  'packages/dataset/',
  'packages/exporters/',
  'packages/monitor/',
]

describe('what a command loads', () => {
  it("answers --help and a command's --help from the manifest, without any command module or rigfit package", () => {
    for (const args of [['--help'], ['estimate', '--help'], ['rules', 'list', '--help']]) {
      const loads = loadsOf(args)
      expect(loads.commands, args.join(' ')).toEqual([])
      expect(loads.holds('packages/core/'), args.join(' ')).toBe(false)
    }
  })

  it.each([
    ['estimate', estimate, 'commands/estimate.js'],
    ['plan', ['plan', '--gpu', 'RTX 4090', '--model', 'llama-3.2-1b'], 'commands/plan.js'],
    ['analyze', ['analyze'], 'commands/analyze.js'],
    ['rules list', ['rules', 'list'], 'commands/rules/list.js'],
  ])('%s loads its own command module and none of the heavy parts', (_name, args, command) => {
    const loads = loadsOf(args)
    expect(loads.commands).toEqual([command])
    expect(loads.holds('packages/core/')).toBe(true)
    expect(heavy.filter((part) => loads.holds(part))).toEqual([])
  })

  it('loads the report renderer and vega for --report, the exporters for --generate-configs', () => {
    const report = loadsOf([...estimate, '--report', join(work, 'estimate.html')])
    expect(report.holds('packages/report/')).toBe(true)
    expect(report.holds('node_modules/vega')).toBe(true)
    const configs = loadsOf(['analyze', '--generate-configs', '--out', join(work, 'configs')])
    expect(configs.holds('packages/exporters/')).toBe(true)
    expect(configs.holds('packages/report/')).toBe(false)
  })
})
