import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readLimited, readTextFile } from '../../src/node/files.js'

const root = mkdtempSync(join(tmpdir(), 'rigfit-files-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('readTextFile', () => {
  it('reads a file within its limit', () => {
    writeFileSync(join(root, 'small.json'), '{"a":1}')
    expect(readTextFile(join(root, 'small.json'), 7)).toEqual({ ok: true, text: '{"a":1}' })
  })

  it('refuses a file one byte over the limit', () => {
    writeFileSync(join(root, 'eight.json'), '{"a":12}')
    expect(readTextFile(join(root, 'eight.json'), 7)).toMatchObject({ ok: false, tooLarge: true })
  })

  it.runIf(existsSync('/proc/self/status'))(
    'bounds a /proc file, which reports size 0, by the bytes read',
    () => {
      expect(readTextFile('/proc/self/status', 16)).toMatchObject({ ok: false, tooLarge: true })
    },
  )

  it('refuses a link that leaves the folder it must stay in, and follows one that stays', () => {
    const pack = join(root, 'pack')
    mkdirSync(pack)
    writeFileSync(join(root, 'secret'), 'root:hash')
    writeFileSync(join(pack, 'real.json'), '{}')
    symlinkSync(join(root, 'secret'), join(pack, 'out.json'))
    symlinkSync(join(pack, 'real.json'), join(pack, 'in.json'))
    const out = readLimited(join(pack, 'out.json'), 100, { within: pack })
    expect(out).toMatchObject({ problem: { code: 'E_PACK_IO' } })
    expect(JSON.stringify(out)).not.toContain('root:hash')
    expect(readLimited(join(pack, 'in.json'), 100, { within: pack })).toMatchObject({ text: '{}' })
  })

  it('refuses what is not a regular file', () => {
    expect(readTextFile(root, 100)).toEqual({ ok: false, tooLarge: false, message: 'not a regular file' })
    expect(readTextFile(join(root, 'missing'), 100)).toEqual({
      ok: false,
      tooLarge: false,
      message: 'no such file',
    })
  })
})
