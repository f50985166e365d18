import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

// rigfit's own commands start without oclif loading the plugins, the bundled plugins' packs found from what their
// rigfit:packs hooks answered at build time (bundle/start.json). Every answer is compared byte for byte with
// oclif's full start, which runs when the data folder holds a package.json (where oclif reads user and linked
// plugins from), here one naming none.

const cli = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const work = mkdtempSync(join(tmpdir(), 'rigfit-command-start-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const emptyData = join(work, 'empty-data')
const oclifData = join(work, 'oclif-data')
mkdirSync(join(oclifData, 'rigfit'), { recursive: true })
writeFileSync(join(oclifData, 'rigfit', 'package.json'), '{}\n')
const config = join(work, 'config')

// Records every file read through fs/promises, as oclif reads each plugin's package.json and manifest.
const hook = join(work, 'record-reads.mjs')
writeFileSync(
  hook,
  `import { appendFileSync, promises } from 'node:fs'
const readFile = promises.readFile
promises.readFile = (path, ...rest) => {
  appendFileSync(process.env.RIGFIT_TEST_READS, String(path) + '\\n')
  return readFile(path, ...rest)
}
`,
)

/** Runs rigfit with the given data folder; returns its output and every file read through fs/promises. */
function run(args: string[], dataHome: string) {
  const record = join(work, `loads-${Math.random().toString(36).slice(2)}.txt`)
  writeFileSync(record, '')
  const base = { ...process.env }
  delete base.RIGFIT_DATA_DIR
  const result = spawnSync(process.execPath, ['--import', pathToFileURL(hook).href, cli, ...args], {
    encoding: 'utf8',
    cwd: work,
    env: {
      ...base,
      NO_COLOR: '1',
      XDG_DATA_HOME: dataHome,
      XDG_CONFIG_HOME: config,
      RIGFIT_TEST_READS: record,
    },
  })
  const loaded = readFileSync(record, 'utf8').trim().split('\n')
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, loaded }
}

/** A bundled plugin's package.json: what only oclif's full start reads. */
const pluginFile = (path: string) => /\/(@oclif\/plugin-[a-z]+|plugins\/[a-z0-9]+)\/package\.json$/.test(path)

// The words of an estimate (`_` stands for a space inside a value).
const estimate = 'estimate --model llama-3.1-8b --gpu RTX_4090 --seq 1024 --lora-rank 16'
  .split(' ')
  .map((word) => word.replace('_', ' '))
const whatIf = ['--gpu', 'RTX 4090', '--model', 'llama-3.2-1b']

describe("rigfit's own commands without loading the plugins", () => {
  it.each(
    [
      estimate,
      [...estimate, '--quant', 'nf4', '--json'],
      ['estimate', '--model', 'qwen2.5-7b', '--gpu', 'RX 7900 XTX', '--method', 'full'],
      ['estimate', '--model', 'no-such-model', '--gpu', 'RTX 4090'],
      ['estimate', '--model', 'llama-3.1-8b', '--gpu', 'RTX 4090', '--bogus'],
      ['estimate', '--list-models'],
      ['plan', ...whatIf],
      ['explain', ...whatIf, 'attention'],
      ['explain', '--gpu', 'H100 SXM', '--model', 'llama-3.1-8b', '--gpus', '8', 'backend'],
      ['rules', 'list'],
      ['rules', 'list', '--json'],
      ['rules', 'validate', fileURLToPath(new URL('../../../plugins/rtx40', import.meta.url))],
    ].map((args) => [args.join(' '), args] as const),
  )('`rigfit %s` answers as oclif does', (_line, args) => {
    const fast = run(args, emptyData)
    const full = run(args, oclifData)
    expect(fast.loaded.filter(pluginFile)).toEqual([])
    expect(full.loaded.some(pluginFile)).toBe(true)
    expect({ status: fast.status, stdout: fast.stdout, stderr: fast.stderr }).toEqual({
      status: full.status,
      stdout: full.stdout,
      stderr: full.stderr,
    })
  })

  it('leaves --help, --version, topics and oclif plugin commands to oclif', () => {
    for (const args of [['estimate', '--version'], ['rules'], ['plugins'], ['help', 'estimate']]) {
      const started = run(args, emptyData)
      expect(started.loaded.some(pluginFile), args.join(' ')).toBe(true)
    }
  })

  it('records every rigfit command and every bundled plugin that names a pack', () => {
    const record = JSON.parse(readFileSync(new URL('../bundle/start.json', import.meta.url), 'utf8')) as {
      commands: string[]
      packs: { plugin: string }[]
    }
    const manifest = JSON.parse(readFileSync(new URL('../oclif.manifest.json', import.meta.url), 'utf8'))
    expect(record.commands).toEqual(Object.keys(manifest.commands).sort())
    const pjson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
    expect(record.packs.map((pack) => pack.plugin)).toEqual(
      (pjson.oclif.plugins as string[]).filter((name) => name.startsWith('@rigfit/plugin-')).sort(),
    )
  })
})
