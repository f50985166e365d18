import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isRigfitError } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { prepareLogDirectory } from '../../src/record/log-directory.js'

function refusal(path: string): { code: string; kind: string; message: string } {
  try {
    prepareLogDirectory(path)
  } catch (error) {
    if (isRigfitError(error)) return { code: error.code, kind: error.kind, message: error.message }
    throw error
  }
  throw new Error(`${path} was accepted`)
}

describe('prepareLogDirectory', () => {
  it('creates missing levels below an existing directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rigfit-logdir-'))
    const target = join(dir, 'a', 'b', 'c')
    prepareLogDirectory(target)
    expect(statSync(target).isDirectory()).toBe(true)
    prepareLogDirectory(target)
  })

  it.runIf(process.platform === 'linux')(
    'refuses the proc and sys pseudo-filesystems at once, at any depth',
    () => {
      for (const path of ['/proc/x', '/proc/self/x/y', '/proc', '/sys/x', '/sys/kernel/x/y/z']) {
        const error = refusal(path)
        expect(error).toMatchObject({ code: 'E_LOG_DIR', kind: 'io' })
        expect(error.message).toMatch(/(proc|sys\w*) pseudo-filesystem|not writable|not a directory/)
        expect(existsSync(path) && path !== '/proc').toBe(false)
      }
    },
  )

  it('refuses a path under a regular file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rigfit-logdir-'))
    writeFileSync(join(dir, 'file'), 'x')
    expect(refusal(join(dir, 'file', 'logs')).message).toMatch(/file is not a directory/)
  })

  it.runIf(process.platform !== 'win32' && process.getuid?.() !== 0)(
    'refuses an unwritable parent',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'rigfit-logdir-'))
      const locked = join(dir, 'locked')
      mkdirSync(locked)
      chmodSync(locked, 0o555)
      expect(refusal(join(locked, 'logs')).message).toMatch(/not writable/)
    },
  )
})
