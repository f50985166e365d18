import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { rigfit } from './helpers/run-cli.js'

// A real full disk: a 4 KiB tmpfs filled to the last byte (mounting one needs root; elsewhere the test is
// skipped). A write there fails with ENOSPC while creating folders still works, which is what left an empty
// --out folder behind.
const repo = fileURLToPath(new URL('../../..', import.meta.url))
const profile = join(repo, 'plugins', 'cpu', 'fixtures', 'vm-2core.json')
const work = mkdtempSync(join(tmpdir(), 'rigfit-disk-full-'))
const disk = join(work, 'disk')
mkdirSync(disk)

function mountFullDisk(): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4k', 'tmpfs', disk], { stdio: 'ignore' })
  } catch {
    return false
  }
  try {
    writeFileSync(join(disk, 'filler'), Buffer.alloc(64 * 1024))
  } catch {
    // ENOSPC: the disk is full, as meant
  }
  return true
}
const mounted = mountFullDisk()

afterAll(() => {
  if (mounted) execFileSync('umount', [disk], { stdio: 'ignore' })
  rmSync(work, { recursive: true, force: true })
})

describe.runIf(mounted)('an export to a full disk', () => {
  it('fails with exit 7 naming ENOSPC and leaves no folder behind', () => {
    const out = join(disk, 'run', 'configs')
    const run = rigfit([
      'export',
      '--from',
      profile,
      '--mode',
      'balanced',
      '--model',
      'gpt2',
      '--format',
      'hf',
      '--out',
      out,
    ])
    expect(run.status).toBe(7)
    expect(run.stderr).toContain('ENOSPC')
    expect(existsSync(join(disk, 'run'))).toBe(false)
    expect(readdirSync(disk)).toEqual(['filler'])
  })
})
