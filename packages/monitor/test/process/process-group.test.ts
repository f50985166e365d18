import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { isSameProcessAlive, listDescendants, readProcessIdentity } from '../../src/process/proc-table.js'
import { ProcessGroup } from '../../src/process/process-group.js'

const options = { cwd: process.cwd(), env: process.env, procRoot: '/proc' }

/** Waits for a complete line in `path`; the deadline is generous, so a busy machine only makes it slower. */
async function waitForFile(path: string): Promise<string> {
  const deadline = performance.now() + 60_000
  while (performance.now() < deadline) {
    if (existsSync(path)) {
      const text = readFileSync(path, 'utf8')
      if (text.endsWith('\n')) return text
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`no ${path}`)
}

describe.runIf(process.platform === 'linux')('ProcessGroup', () => {
  it('runs the command in a group of its own and reports its exit', async () => {
    const group = ProcessGroup.spawn([process.execPath, '-e', 'process.exit(3)'], options)
    const pid = group.pid as number
    expect(readProcessIdentity('/proc', pid)?.pgid).toBe(pid)
    expect(await group.exited).toEqual({ code: 3, signal: null, spawnError: null })
  })

  it('reports a command that cannot start', async () => {
    const group = ProcessGroup.spawn(['rigfit-no-such-program'], options)
    const exit = await group.exited
    expect(exit.spawnError?.code).toBe('ENOENT')
  })

  it('escalates from SIGINT to SIGKILL and takes down a child that left the group', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rigfit-group-'))
    const pidFile = join(dir, 'pids')
    // The parent ignores SIGINT; its child calls setsid (detached) and ignores SIGTERM too.
    const script = `
      const { spawn } = require('node:child_process')
      process.on('SIGINT', () => {})
      const c = spawn(process.execPath, ['-e', "process.on('SIGINT',()=>{});process.on('SIGTERM',()=>{});setInterval(()=>{},1000)"], { detached: true, stdio: 'ignore' })
      require('node:fs').writeFileSync(${JSON.stringify(pidFile)}, c.pid + '\\n')
      setInterval(() => {}, 1000)`
    const group = ProcessGroup.spawn([process.execPath, '-e', script], options)
    const escapee = Number(await waitForFile(pidFile))
    const identity = readProcessIdentity('/proc', escapee)
    expect(identity?.pgid).not.toBe(group.pid)
    expect(listDescendants('/proc', group.pid as number).map((p) => p.pid)).toContain(escapee)
    await group.terminate('SIGINT', 150)
    const exit = await group.exited
    expect(exit.signal).toBe('SIGTERM')
    expect(isSameProcessAlive('/proc', escapee, identity?.startTime ?? -1)).toBe(false)
  })
})
