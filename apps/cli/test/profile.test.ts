import { spawnSync } from 'node:child_process'
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { HardwareProfile } from '@rigfit/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url))

function rigfit(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', ...env },
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

let dir: string
let saved: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rigfit-profile-cli-'))
  saved = join(dir, 'profile.json')
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe.runIf(process.platform === 'linux')('rigfit profile', () => {
  it('--json --out prints only the profile and saves it; a second --out refuses to overwrite', async () => {
    const first = rigfit(['profile', '--json', '--out', saved])
    expect(first.code).toBe(0)
    const profile = HardwareProfile.parse(JSON.parse(first.stdout))
    expect(profile.source).toBe('detected')
    expect(profile.probes.length).toBeGreaterThan(0)
    expect(HardwareProfile.parse(JSON.parse(await readFile(saved, 'utf8'))).host.hostname).toBe(
      profile.host.hostname,
    )

    const before = await readFile(saved, 'utf8')
    const again = rigfit(['profile', '--out', saved])
    expect(again.code).toBe(8)
    expect(again.stderr).toMatch(/E_EXISTS.*already exists/)
    expect(again.stderr).toMatch(/--force/)
    expect(await readFile(saved, 'utf8')).toBe(before)
  })

  it('prints a readable summary, saying so when there is no GPU', () => {
    const result = rigfit(['profile'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^CPU +.+cores/m)
    expect(result.stdout).toMatch(/^Memory +/m)
    expect(result.stdout).toMatch(/^Probes +\d+ ok/m)
    const json = HardwareProfile.parse(JSON.parse(rigfit(['profile', '--json']).stdout))
    if (json.gpus.length === 0) expect(result.stdout).toMatch(/^GPU +none found/m)
  })

  it('--from loads a saved profile; a broken one is refused naming file and field', async () => {
    const loaded = rigfit(['profile', '--from', saved, '--json'])
    expect(loaded.code).toBe(0)
    expect(JSON.parse(loaded.stdout).source).toBe('file')

    const broken = join(dir, 'broken.json')
    const json = JSON.parse(await readFile(saved, 'utf8'))
    json.cpu.logicalCores = -1
    await writeFile(broken, JSON.stringify(json))
    const invalid = rigfit(['profile', '--from', broken])
    expect(invalid.code).toBe(4)
    expect(invalid.stderr).toContain(broken)
    expect(invalid.stderr).toContain('cpu.logicalCores')
    expect(rigfit(['profile', '--from', join(dir, 'nope.json')]).code).toBe(7)
  })

  it('what-if: --gpu NAME --gpus N from the catalog; unknown names and bad numbers are usage errors', () => {
    const whatIf = rigfit(['profile', '--from', saved, '--gpu', 'RTX 3060 12GB', '--gpus', '2', '--json'])
    expect(whatIf.code).toBe(0)
    const profile = JSON.parse(whatIf.stdout)
    expect(profile.source).toBe('what-if')
    expect(profile.gpus.map((gpu: { catalog: { id: string } }) => gpu.catalog.id)).toEqual([
      'rtx-3060-12gb',
      'rtx-3060-12gb',
    ])

    const unknown = rigfit(['profile', '--from', saved, '--gpu', 'Voodoo 9000', '--json'])
    expect(unknown.code).toBe(3)
    expect(JSON.parse(unknown.stdout).error.code).toBe('E_UNKNOWN_GPU')
    expect(rigfit(['profile', '--from', saved, '--vram', '-3']).code).toBe(2)
    expect(rigfit(['profile', '--from', saved, '--benchmark']).code).toBe(2)
  })

  it('a hanging nvidia-smi on PATH degrades the profile, not the command', async () => {
    const bin = await mkdtemp(join(tmpdir(), 'rigfit-hang-'))
    try {
      await writeFile(join(bin, 'nvidia-smi'), '#!/bin/sh\nexec sleep 30\n')
      await chmod(join(bin, 'nvidia-smi'), 0o755)
      const result = rigfit(['profile', '--json', '--timeout', '400'], { PATH: `${bin}:/usr/bin:/bin` })
      expect(result.code).toBe(0)
      const probe = JSON.parse(result.stdout).probes.find((p: { name: string }) => p.name === 'nvidia-smi')
      expect(probe).toMatchObject({ ok: false, error: expect.stringContaining('timed out after 400 ms') })
    } finally {
      await rm(bin, { recursive: true, force: true })
    }
  })
})

describe.runIf(process.platform === 'linux')('rigfit doctor', () => {
  it('prints every probe with its timing and raw output', () => {
    const human = rigfit(['doctor'])
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/^Probes:/m)
    expect(human.stdout).toMatch(/^ {2}ok {3}cpu +[\d.]+ ms/m)
    expect(human.stdout).toMatch(/── cpu: \/proc\/cpuinfo/)
    const json = JSON.parse(rigfit(['doctor', '--json']).stdout)
    expect(json.environment.node).toBe(process.version)
    expect(json.raw.some((raw: { source: string }) => raw.source === '/proc/meminfo')).toBe(true)
    expect(HardwareProfile.parse(json.profile).probes).toEqual(json.probes)
  })
})
