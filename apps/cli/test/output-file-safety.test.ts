import { spawn, spawnSync } from 'node:child_process'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { rigfit } from './helpers/run-cli.js'

// What --out may replace, what --from/--plan may read, and what rigfit cleans up after itself. Real files,
// links, FIFOs and (as root) a device node in a temp dir; never the machine's own /dev/null.
const repo = fileURLToPath(new URL('../../..', import.meta.url))
const fixture = join(repo, 'plugins', 'cpu', 'fixtures', 'vm-2core.json')
const work = mkdtempSync(join(tmpdir(), 'rigfit-out-safety-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))
const isRoot = process.getuid?.() === 0

function dir(name: string): string {
  const path = join(work, name)
  mkdirSync(path, { recursive: true })
  return path
}

/** A pid no process has: one that just exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  })
  return Number(child.stdout)
}

describe('--out replaces regular files only', () => {
  it('refuses a FIFO, even with --force, and leaves it a FIFO', () => {
    const d = dir('fifo')
    const fifo = join(d, 'profile.json')
    spawnSync('mkfifo', [fifo])
    const run = rigfit(['profile', '--from', fixture, '--out', fifo, '--force'])
    expect(run.status).not.toBe(0)
    expect(run.stderr).toMatch(/not a regular file/)
    expect(statSync(fifo).isFIFO()).toBe(true)
  })

  it.runIf(isRoot)('refuses a device node, even with --force as root', () => {
    const d = dir('device')
    const device = join(d, 'null')
    expect(spawnSync('mknod', ['-m', '666', device, 'c', '1', '3']).status).toBe(0)
    const run = rigfit(['profile', '--from', fixture, '--out', device, '--force'])
    expect(run.status).not.toBe(0)
    expect(lstatSync(device).isCharacterDevice()).toBe(true)
  })

  it('never follows a link into another file, nor replaces the link', () => {
    const d = dir('link')
    const victim = join(d, 'victim.txt')
    writeFileSync(victim, 'keep me\n')
    const link = join(d, 'profile.json')
    symlinkSync(victim, link)
    const run = rigfit(['profile', '--from', fixture, '--out', link, '--force'])
    expect(run.status).not.toBe(0)
    expect(run.stderr).toMatch(/is a link; rigfit replaces regular files only/)
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n')
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
  })

  it('export --force refuses a link among the files it would write, and writes none of them', () => {
    const d = dir('export-link')
    const victim = join(d, 'victim.txt')
    writeFileSync(victim, 'keep me\n')
    symlinkSync(victim, join(d, 'training_args.json'))
    const run = rigfit([
      'export',
      '--from',
      fixture,
      '--mode',
      'balanced',
      '--format',
      'hf',
      '--out',
      d,
      '--force',
    ])
    expect(run.status).not.toBe(0)
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n')
    expect(existsSync(join(d, 'model_args.json'))).toBe(false)
  })

  it('export --out naming a FIFO says it is not a folder', () => {
    const fifo = join(dir('export-fifo'), 'out')
    spawnSync('mkfifo', [fifo])
    const run = rigfit(['export', '--from', fixture, '--mode', 'balanced', '--format', 'hf', '--out', fifo])
    expect(run.status).not.toBe(0)
    expect(run.stderr).toMatch(/is not a folder/)
    expect(statSync(fifo).isFIFO()).toBe(true)
  })

  it('a regular file is replaced with --force and kept without it', () => {
    const d = dir('regular')
    const target = join(d, 'profile.json')
    writeFileSync(target, 'old\n')
    expect(rigfit(['profile', '--from', fixture, '--out', target]).status).not.toBe(0)
    expect(readFileSync(target, 'utf8')).toBe('old\n')
    expect(rigfit(['profile', '--from', fixture, '--out', target, '--force']).status).toBe(0)
    expect(JSON.parse(readFileSync(target, 'utf8')).schemaVersion).toBeDefined()
  })
})

describe('temporaries of a killed write are cleaned up at the next write', () => {
  it('removes those of a dead rigfit, keeps those of a live one and anything not ours', () => {
    const d = dir('stale')
    const stale = join(d, `.profile.json.${deadPid()}.deadbeef.tmp`)
    const live = join(d, `.profile.json.${process.pid}.cafebabe.tmp`)
    const other = join(d, '.notes.txt.1.deadbeef.tmp')
    for (const path of [stale, live, other]) writeFileSync(path, '{')
    expect(rigfit(['profile', '--from', fixture, '--out', join(d, 'profile.json')]).status).toBe(0)
    expect(existsSync(stale)).toBe(false)
    expect(existsSync(live)).toBe(true)
    expect(existsSync(other)).toBe(true)
  })

  it('a profile killed with SIGKILL mid-write leaves at most its temporary, which the next write removes', async () => {
    const d = dir('killed')
    const target = join(d, 'profile.json')
    const cli = join(repo, 'apps', 'cli', 'bin', 'run.js')
    const child = spawn(process.execPath, [cli, 'profile', '--from', fixture, '--out', target], {
      stdio: 'ignore',
    })
    child.kill('SIGKILL')
    await new Promise((resolve) => child.once('exit', resolve))
    expect(rigfit(['profile', '--from', fixture, '--out', target, '--force']).status).toBe(0)
    expect(spawnSync('ls', ['-A', d], { encoding: 'utf8' }).stdout.trim().split('\n')).toEqual([
      'profile.json',
    ])
  })
})

describe('--from and --plan read a bounded amount and never echo it', () => {
  it('a file that is not JSON is named with its position, not its text', () => {
    const secret = join(dir('secret'), 'passwd')
    writeFileSync(secret, 'root:s3cr3t-hash:0:0:root:/root:/bin/bash\n')
    for (const args of [
      ['profile', '--from', secret],
      ['export', '--plan', secret, '--format', 'hf'],
    ]) {
      const run = rigfit(args)
      expect(run.status).not.toBe(0)
      expect(run.stderr).toMatch(/not valid JSON/)
      expect(run.stdout + run.stderr).not.toContain('s3cr3t')
    }
  })

  it('a file over the limit is refused by what was read', () => {
    const big = join(dir('big'), 'profile.json')
    writeFileSync(big, `{"x": "${'a'.repeat(17 * 1024 * 1024)}"}`)
    const run = rigfit(['profile', '--from', big])
    expect(run.status).not.toBe(0)
    expect(run.stderr).toMatch(/over the limit of 16777216 bytes/)
  })

  it('a pipe is read up to the limit and no further', async () => {
    const fifo = join(dir('pipe'), 'plan.json')
    spawnSync('mkfifo', [fifo])
    // The writer would go on for 64 MiB; the reader stops past 16 MiB and the writer is ended with EPIPE.
    const writer = spawn('sh', ['-c', `head -c 67108864 /dev/zero | tr '\\0' ' ' > '${fifo}'`], {
      stdio: 'ignore',
    })
    const run = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [join(repo, 'apps', 'cli', 'bin', 'run.js'), 'export', '--plan', fifo, '--format', 'hf'],
        {
          env: { ...process.env, NO_COLOR: '1' },
        },
      )
      let stderr = ''
      child.stderr.on('data', (chunk) => {
        stderr += chunk
      })
      child.on('close', (status) => resolve({ status, stderr }))
    })
    writer.kill('SIGKILL')
    expect(run.status).not.toBe(0)
    expect(run.stderr).toMatch(/over the limit of 16777216 bytes/)
  })
})
