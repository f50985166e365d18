import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { recoverExportFolder } from '../src/folder-lock.js'

// A pid no process has (above Linux's pid_max): the leftovers of a killed export.
const DEAD = 99999999

async function folderWith(path: string, content: string) {
  await mkdir(path, { recursive: true })
  await writeFile(join(path, 'file.txt'), content)
}

describe('what a killed export leaves beside the folder', () => {
  it('killed between the swap renames: the complete new set is moved in, the old folder removed', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'rigfit-recover-'))
    await folderWith(join(parent, `.out.rigfit-ready-${DEAD}`), 'new')
    await folderWith(join(parent, `.out.rigfit-old-${DEAD}`), 'old')
    expect(await recoverExportFolder(join(parent, 'out'))).toHaveLength(1)
    expect(await readFile(join(parent, 'out', 'file.txt'), 'utf8')).toBe('new')
    expect(await readdir(parent)).toEqual(['out'])
  })

  it('killed before the swap: the folder stays as it was, the staged and ready sets are removed', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'rigfit-recover-'))
    await folderWith(join(parent, 'out'), 'old')
    await folderWith(join(parent, `.out.rigfit-ready-${DEAD}`), 'new')
    await folderWith(join(parent, `.out.rigfit-stage-${DEAD}`), 'half')
    expect(await recoverExportFolder(join(parent, 'out'))).toEqual([])
    expect(await readFile(join(parent, 'out', 'file.txt'), 'utf8')).toBe('old')
    expect(await readdir(parent)).toEqual(['out'])
  })
})
