import { mkdir, mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import type { ExportFile } from '../src/types.js'
import { writeExportFiles } from '../src/write-files.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rigfit-write-'))
})

const files: ExportFile[] = [
  { path: 'a.json', content: '{"a":1}\n', executable: false },
  { path: 'sub/run.sh', content: '#!/bin/sh\n', executable: true },
]

async function listAll(root: string): Promise<string[]> {
  return (await readdir(root, { recursive: true })).map(String).sort()
}

describe('writeExportFiles', () => {
  it('writes every file, creating folders, with the executable bit on scripts', async () => {
    const written = await writeExportFiles(dir, files, { force: false })
    expect(written).toEqual([join(dir, 'a.json'), join(dir, 'sub/run.sh')])
    expect(await readFile(join(dir, 'a.json'), 'utf8')).toBe('{"a":1}\n')
    expect((await stat(join(dir, 'sub/run.sh'))).mode & 0o111).not.toBe(0)
    expect((await stat(join(dir, 'a.json'))).mode & 0o111).toBe(0)
  })

  it('refuses to overwrite without force and writes nothing at all', async () => {
    await writeFile(join(dir, 'a.json'), 'mine')
    await expect(writeExportFiles(dir, files, { force: false })).rejects.toMatchObject({
      code: 'E_EXISTS',
      kind: 'exists',
    })
    expect(await readFile(join(dir, 'a.json'), 'utf8')).toBe('mine')
    expect(await listAll(dir)).toEqual(['a.json'])
  })

  it('overwrites with force', async () => {
    await writeFile(join(dir, 'a.json'), 'mine')
    await writeExportFiles(dir, files, { force: true })
    expect(await readFile(join(dir, 'a.json'), 'utf8')).toBe('{"a":1}\n')
  })

  it('leaves nothing behind when one file cannot be written', async () => {
    // A file named like the folder of the second target: the first is written to its temp file, the second fails.
    await writeFile(join(dir, 'sub'), 'in the way')
    await expect(writeExportFiles(dir, files, { force: false })).rejects.toMatchObject({
      code: 'E_WRITE',
      kind: 'io',
    })
    expect(await listAll(dir)).toEqual(['sub'])
  })

  it('refuses when a directory stands where a file goes', async () => {
    await mkdir(join(dir, 'a.json'))
    await expect(writeExportFiles(dir, files, { force: true })).rejects.toMatchObject({
      code: 'E_EXISTS_DIR',
    })
    expect(await listAll(dir)).toEqual(['a.json'])
  })
})
