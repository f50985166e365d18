import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { lockFileOf, lockLogDirectory } from '../../src/record/log-lock.js'
import { runLogFileName } from '../../src/record/node-log.js'

const dirs: string[] = []
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rigfit-log-lock-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe('the run log lock', () => {
  it('locks each node of a multi-node job apart, in one shared run folder', () => {
    const dir = folder()
    const nodes = ['node-a', 'node-b', 'gpu[01]']
    const locks = nodes.map((node) => lockLogDirectory(dir, runLogFileName(node)))
    expect(readdirSync(dir).sort()).toEqual(nodes.map((node) => lockFileOf(runLogFileName(node))).sort())
    // A second monitor of a node that already records is refused, whatever the other nodes do.
    for (const node of nodes) {
      expect(() => lockLogDirectory(dir, runLogFileName(node))).toThrow(/in use by another rigfit monitor/)
    }
    for (const lock of locks) lock.release()
    expect(readdirSync(dir)).toEqual([])
  })

  it('keeps monitor.lock for a run on one machine, and refuses a second monitor there', () => {
    const dir = folder()
    const lock = lockLogDirectory(dir)
    expect(readdirSync(dir)).toEqual(['monitor.lock'])
    expect(() => lockLogDirectory(dir, runLogFileName(null))).toThrow(/in use by another rigfit monitor/)
    lock.release()
    lockLogDirectory(dir).release()
  })
})
