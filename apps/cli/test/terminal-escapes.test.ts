import { spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { rigfit } from './helpers/run-cli.js'

// Text from a pack or a tool must never act on the terminal: clear it, set its title, return to the start of a
// line and print a line that looks like rigfit's own. Each case feeds the payload through a real file or a fake
// tool and checks what the CLI printed, text mode and JSON.
const PAYLOAD = '\u001b[2J\u001b]0;PWNED\u0007\r\nFAKE: ok all good'
// ESC, BEL and CR: what the payload needs to act on a terminal.
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for raw control characters is the point
const RAW_CONTROL = /[\u001b\u0007\r]/

const repo = fileURLToPath(new URL('../../..', import.meta.url))
const fixture = join(repo, 'plugins', 'cpu', 'fixtures', 'vm-2core.json')
const work = mkdtempSync(join(tmpdir(), 'rigfit-escapes-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const goodRule = {
  id: 'note',
  description: 'warns',
  priority: 50,
  conditions: { all: [] },
  event: { type: 'warn', params: { id: 'note-message', message: 'hello' } },
}

/** A pack folder; `edit` puts the payload somewhere in it. */
function pack(
  name: string,
  edit: (p: { meta: Record<string, unknown>; rule: Record<string, unknown> }) => void,
  ruleFile = 'note.json',
) {
  const dir = join(work, name)
  mkdirSync(join(dir, 'rules'), { recursive: true })
  const parts = {
    meta: { name, version: '1.0.0', description: 'a pack' } as Record<string, unknown>,
    rule: structuredClone(goodRule) as Record<string, unknown>,
  }
  edit(parts)
  writeFileSync(
    join(dir, 'pack.json'),
    JSON.stringify({ schemaVersion: 1, meta: parts.meta, appliesTo: null }),
  )
  writeFileSync(join(dir, 'rules', ruleFile), JSON.stringify(parts.rule))
  return dir
}

function expectNoRawControls(run: { stdout: string; stderr: string }) {
  expect(run.stdout).not.toMatch(RAW_CONTROL)
  expect(run.stderr).not.toMatch(RAW_CONTROL)
  expect(`${run.stdout}${run.stderr}`).not.toMatch(/^FAKE: ok all good/m)
}

const hostilePacks: [string, () => string, RegExp][] = [
  [
    'the pack description',
    () =>
      pack('desc', (p) => {
        p.meta.description = PAYLOAD
      }),
    /meta\.description/,
  ],
  [
    'a rule description',
    () =>
      pack('rule-desc', (p) => {
        p.rule.description = PAYLOAD
      }),
    /description/,
  ],
  [
    "a rule's reason",
    () =>
      pack('reason', (p) => {
        p.rule.event = { type: 'warn', params: { id: 'x-message', message: PAYLOAD } }
      }),
    /message/,
  ],
  ['a rule file name', () => pack('file-name', () => {}, `${PAYLOAD}.json`), /\\x1b/],
]

describe('text from packs and tools reaches the terminal with its control characters escaped', () => {
  it.each(hostilePacks)('%s: rules validate refuses it and prints nothing raw', (_what, make, where) => {
    const run = rigfit(['rules', 'validate', make()])
    expect(run.status).not.toBe(0)
    expectNoRawControls(run)
    expect(run.stdout + run.stderr).toMatch(where)
  })

  it.each(hostilePacks)(
    '%s: plan and explain with --rules print nothing raw, text or JSON',
    (_what, make) => {
      const dir = make()
      for (const args of [
        ['plan', '--from', fixture, '--rules', dir],
        ['plan', '--from', fixture, '--rules', dir, '--json'],
        ['explain', 'precision', '--from', fixture, '--rules', dir],
      ]) {
        const run = rigfit(args)
        expectNoRawControls(run)
      }
    },
  )

  it('a case name with the payload is refused by rules test', () => {
    const dir = pack('case-name', () => {})
    mkdirSync(join(dir, 'cases'))
    writeFileSync(
      join(dir, 'cases', 'c.json'),
      JSON.stringify([{ name: PAYLOAD, fixture: 'none', mode: 'balanced', expect: {} }]),
    )
    const run = rigfit(['rules', 'test', dir])
    expect(run.status).not.toBe(0)
    expectNoRawControls(run)
  })

  it('a GPU name from nvidia-smi is shown escaped by profile and doctor', () => {
    const bin = join(work, 'bin')
    mkdirSync(bin, { recursive: true })
    const row = `0, NVIDIA GeForce RTX 4090${PAYLOAD.replace(/\r\n/g, '')}, GPU-5c1f8b2e-3b0a-8d6f-1f34-9a2c7e41b0d3, 00000000:01:00.0, 550.54.14, 24564, 23868, 397, 3, 41, 28.47, 450.00, 450.00, 600.00, 210, 405, 3120, 1, 4, 16, 16, P8`
    writeFileSync(
      join(bin, 'nvidia-smi'),
      `#!/bin/sh\ncase "$*" in\n  *compute_cap*|*mig.mode*) echo "0, [N/A]" ;;\n  --query-gpu=*) printf '%s\\n' '${row}' ;;\nesac\n`,
    )
    chmodSync(join(bin, 'nvidia-smi'), 0o755)
    for (const args of [['profile'], ['doctor']]) {
      const result = spawnSync(process.execPath, [join(repo, 'apps', 'cli', 'bin', 'run.js'), ...args], {
        encoding: 'utf8',
        env: { ...process.env, NO_COLOR: '1', PATH: `${bin}:/usr/bin:/bin` },
        timeout: 50_000,
      })
      expectNoRawControls(result)
      expect(result.stdout + result.stderr).toContain('\\x1b')
    }
  })

  it("doctor shows a tool's own rendition codes (conceal, blink, colour) escaped, not obeyed", () => {
    const bin = join(work, 'bin-sgr')
    mkdirSync(bin, { recursive: true })
    writeFileSync(
      join(bin, 'nvidia-smi'),
      `#!/bin/sh\nprintf '\\033[8mhidden\\033[0m \\033[5;31mblinking\\033[0m\\n'\nexit 3\n`,
    )
    chmodSync(join(bin, 'nvidia-smi'), 0o755)
    const result = spawnSync(process.execPath, [join(repo, 'apps', 'cli', 'bin', 'run.js'), 'doctor'], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1', PATH: `${bin}:/usr/bin:/bin` },
      timeout: 50_000,
    })
    expectNoRawControls(result)
    expect(result.stdout).toContain('\\x1b[8mhidden')
    expect(result.stdout).toContain('\\x1b[5;31mblinking')
  })
})
