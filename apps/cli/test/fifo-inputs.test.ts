import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { rigfit } from './helpers/run-cli.js'

// A FIFO given where a file is expected must never hang a command: read with a deadline (--timeout), then exit 7
// naming the file; or refused where a regular file is required. Each case runs the real CLI on a real FIFO that
// no process writes to.
const repo = fileURLToPath(new URL('../../..', import.meta.url))
const profile = join(repo, 'plugins', 'cpu', 'fixtures', 'vm-2core.json')
const work = mkdtempSync(join(tmpdir(), 'rigfit-fifo-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

let count = 0
function fifo(): string {
  count += 1
  const path = join(work, `input-${count}.json`)
  execFileSync('mkfifo', [path])
  return path
}

const plan = JSON.parse(
  execFileSync(
    process.execPath,
    [join(repo, 'apps', 'cli', 'bin', 'run.js'), 'plan', '--from', profile, '--model', 'gpt2', '--json'],
    { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
  ),
)

describe.runIf(process.platform !== 'win32')('FIFOs for every file flag', () => {
  const timedOut: [string, (path: string) => string[]][] = [
    ['plan --from', (p) => ['plan', '--from', p, '--model', 'gpt2', '--timeout', '1']],
    ['analyze --from', (p) => ['analyze', '--from', p, '--model', 'gpt2', '--timeout', '1']],
    ['profile --from', (p) => ['profile', '--from', p, '--timeout', '1000']],
    [
      'export --plan',
      (p) => ['export', '--plan', p, '--format', 'hf', '--out', join(work, 'o'), '--timeout', '1'],
    ],
    ['explain --plan', (p) => ['explain', '--plan', p, '--timeout', '1']],
    [
      'monitor --plan',
      (p) => ['monitor', '--plan', p, '--timeout', '1', '--log-dir', join(work, 'l'), '--', 'true'],
    ],
  ]
  it.each(timedOut)('%s with no writer fails with exit 7 naming the FIFO', (_flag, args) => {
    const path = fifo()
    const run = rigfit(args(path))
    expect(run.status).toBe(7)
    expect(run.stderr).toContain(path)
    expect(run.stderr).toMatch(/nothing wrote to within 1 s/)
  })

  it('plan --from a FIFO that a writer fills reads it like a file', () => {
    const path = fifo()
    const writer = spawn('sh', ['-c', `cat '${profile}' > '${path}'`], { stdio: 'ignore' })
    const run = rigfit(['plan', '--from', path, '--model', 'gpt2', '--json'])
    writer.kill()
    expect(run.status).toBe(0)
    expect(JSON.parse(run.stdout).settings).toEqual(plan.settings)
  })

  it('monitor --metrics-file FIFO is refused with exit 7 before anything starts', () => {
    const path = fifo()
    const logDir = join(work, 'metrics-log')
    const run = rigfit(['monitor', '--metrics-file', path, '--log-dir', logDir, '--', 'true'])
    expect(run.status).toBe(7)
    expect(run.stderr).toContain(`--metrics-file ${path}: is a FIFO, not a regular file`)
    expect(() => statSync(logDir)).toThrow()
  })

  it('--dataset FIFO is refused as a FIFO (not "a folder") with exit 7', () => {
    const path = fifo()
    const run = rigfit(['plan', '--gpu', 'RTX 4090', '--model', 'gpt2', '--dataset', path])
    expect(run.status).toBe(7)
    expect(run.stderr).toContain(`${path}: is a FIFO, not a regular file`)
    expect(run.stderr).not.toContain('folder')
  })

  it('--rules FIFO and rules validate FIFO are refused, never opened', () => {
    const path = fifo()
    for (const args of [
      ['rules', 'validate', path],
      ['plan', '--from', profile, '--model', 'gpt2', '--rules', path],
    ]) {
      const run = rigfit(args)
      expect(run.status).not.toBe(0)
      expect(run.status).not.toBe(1)
      expect(run.stderr).toContain('not a regular file')
      expect(run.stderr).not.toContain('ENOTDIR')
    }
  })

  it.runIf(statSync('/dev/zero').isCharacterDevice())(
    'a device given as --rules or to rules validate is a named problem, not a raw ENOTDIR',
    () => {
      for (const args of [
        ['rules', 'validate', '/dev/zero'],
        ['plan', '--from', profile, '--model', 'gpt2', '--rules', '/dev/zero'],
      ]) {
        const run = rigfit(args)
        expect(run.status).not.toBe(0)
        expect(run.status).not.toBe(1)
        expect(run.stderr).toContain('/dev/zero')
        expect(run.stderr).toContain('not a regular file')
        expect(run.stderr).not.toContain('ENOTDIR')
      }
    },
  )
})
