import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { runTool } from '../src/exec/run-tool.js'
import { ProbeContext } from '../src/probe-runner.js'
import { fakeBin, isRunning, pathWith, recordedPids, survivorsOf } from './fake-tools.js'

const dirs: string[] = []
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
})

async function survivors(dir: string): Promise<number[]> {
  const pids = await recordedPids(dir)
  expect(pids.length).toBeGreaterThan(0)
  return survivorsOf(pids)
}

async function tool(body: string): Promise<{ dir: string; path: string }> {
  const dir = await fakeBin({ tool: body })
  dirs.push(dir)
  return { dir, path: join(dir, 'tool') }
}

/** Starts `sleep` in a session of its own (out of the tool's process group) and records its pid. */
const escapee = (redirect: string) => `setsid sleep 300 ${redirect} &\necho $! >> "$(dirname "$0")/pids"`

describe.runIf(process.platform === 'linux')('processes of probed tools', () => {
  it('a tool that exits 0 leaves nothing behind: setsid children and double forks are ended', async () => {
    const { dir, path } = await tool(
      [
        escapee('> /dev/null 2>&1'),
        // A double fork: the middle shell exits at once, so the sleep is re-parented to init.
        `sh -c 'setsid sleep 300 > /dev/null 2>&1 & echo $! >> "$1/pids"' - "$(dirname "$0")" &`,
        'wait $!',
        'echo "0, ok"',
      ].join('\n'),
    )
    const result = await runTool(path, [], { timeoutMs: 5000, env: pathWith(dir) })
    expect(result).toMatchObject({ ok: true, exitCode: 0, timedOut: false, stdout: '0, ok\n' })
    expect(await survivors(dir)).toEqual([])
  })

  it('a child holding stdout open does not turn valid output into a timeout', async () => {
    const { dir, path } = await tool([escapee(''), 'echo "0, NVIDIA GeForce RTX 4090"'].join('\n'))
    const result = await runTool(path, [], { timeoutMs: 5000, env: pathWith(dir) })
    expect(result).toMatchObject({
      ok: true,
      exitCode: 0,
      timedOut: false,
      error: null,
      stdout: '0, NVIDIA GeForce RTX 4090\n',
    })
    expect(await survivors(dir)).toEqual([])
  })

  it('a child that drops the marker and holds stdout cannot hold the result past a short grace', async () => {
    // env -i clears the environment, so only the process group and the parent links could find it: neither
    // does once setsid and the tool's exit have cut both. The result must still be the tool's own.
    const { dir, path } = await tool(
      ['env -i /usr/bin/setsid /bin/sleep 300 &', 'echo $! >> "$(dirname "$0")/pids"', 'echo "0, ok"'].join(
        '\n',
      ),
    )
    const result = await runTool(path, [], { timeoutMs: 3000, env: pathWith(dir) })
    for (const pid of await recordedPids(dir)) if (isRunning(pid)) process.kill(pid, 'SIGKILL')
    expect(result).toMatchObject({ ok: true, exitCode: 0, timedOut: false, stdout: '0, ok\n' })
  })

  it('an env -i setsid child is remembered while the tool runs and ended when it exits', async () => {
    // Neither the marker (env -i) nor the group (setsid) leads to it; the parent link did while the tool ran.
    const { dir, path } = await tool(
      [
        'env -i /usr/bin/setsid /bin/sleep 300 > /dev/null 2>&1 &',
        'echo $! >> "$(dirname "$0")/pids"',
        'sleep 2',
        'echo "0, ok"',
      ].join('\n'),
    )
    const result = await runTool(path, [], { timeoutMs: 30_000, env: pathWith(dir) })
    expect(result).toMatchObject({ ok: true, exitCode: 0, timedOut: false, stdout: '0, ok\n' })
    expect(await survivors(dir)).toEqual([])
  })

  it('a hanging tool is ended with every process it started, setsid ones included', async () => {
    const { dir, path } = await tool([escapee(''), escapee('> /dev/null'), 'sleep 300 &', 'wait'].join('\n'))
    // The deadline leaves a busy machine ample time to start every escapee before the tool is ended.
    const result = await runTool(path, [], { timeoutMs: 5000, env: pathWith(dir) })
    expect(result).toMatchObject({ ok: false, timedOut: true, error: 'timed out after 5000 ms' })
    expect(await recordedPids(dir)).toHaveLength(2)
    expect(await survivors(dir)).toEqual([])
  })

  it('a failing tool is ended with its children too, and its exit code is reported', async () => {
    const { dir, path } = await tool([escapee('> /dev/null 2>&1'), 'echo "broken" >&2', 'exit 3'].join('\n'))
    const result = await runTool(path, [], { timeoutMs: 5000, env: pathWith(dir) })
    expect(result).toMatchObject({ ok: false, exitCode: 3, error: 'exit code 3: broken' })
    expect(await survivors(dir)).toEqual([])
  })
})

describe('probe deadlines', () => {
  it('cover parsing: an answer that comes after the deadline is refused as a timeout', async () => {
    const ctx = new ProbeContext({ timeoutMs: 100, env: process.env })
    const value = await ctx.probe('slow parse', async () => {
      // Stands for a parser that blocks the event loop: no timer can fire while it runs.
      const until = performance.now() + 300
      while (performance.now() < until) {}
      return 'parsed'
    })
    expect(value).toBeNull()
    expect(ctx.records).toEqual([
      expect.objectContaining({ name: 'slow parse', ok: false, error: 'timed out after 100 ms' }),
    ])
  })

  it('an answer within the deadline counts', async () => {
    const ctx = new ProbeContext({ timeoutMs: 10_000, env: process.env })
    expect(await ctx.probe('quick', async () => 'parsed')).toBe('parsed')
    expect(ctx.records).toEqual([expect.objectContaining({ name: 'quick', ok: true })])
  })
})
