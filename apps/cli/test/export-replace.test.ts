import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cp, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { recoverExportFolder } from '@rigfit/exporters'
import { beforeAll, describe, expect, it } from 'vitest'
import { workspaceFixture } from './helpers/workspace-fixtures.js'

const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const fixture = (name: string) => workspaceFixture('@rigfit/exporters', 'plans', `${name}.json`)
// A LoRA export (with adapter_config.json) replaced by a full fine-tune's, which writes none.
const OLD = ['--plan', fixture('rtx3090x2-lora-fsdp'), '--format', 'hf']
const NEW = ['--plan', fixture('a100x4-zero2'), '--format', 'hf']
const USER_FILE = 'notes.txt'

const exportArgs = (args: string[], out: string, force = false) => [
  bin,
  'export',
  ...args,
  '--out',
  out,
  ...(force ? ['--force'] : []),
]

function rigfit(args: string[]) {
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

async function tree(root: string, under = ''): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(join(root, under), { withFileTypes: true })) {
    const path = under ? `${under}/${e.name}` : e.name
    out.push(...(e.isDirectory() ? await tree(root, path) : [path]))
  }
  return out.sort()
}

const sha = (text: Buffer | string) => createHash('sha256').update(text).digest('hex')

/**
 * What the folder holds: 'old' or 'new' when it is wholly one export (its manifest is that export's, every file
 * the manifest lists has the listed checksum, and nothing else is there but the user's file), else a description.
 */
async function folderState(dir: string, manifests: { old: string; new: string }): Promise<string> {
  const manifest = await readFile(join(dir, 'rigfit-export.json'), 'utf8').catch(() => null)
  if (manifest === null) return 'no manifest'
  const which = manifest === manifests.old ? 'old' : manifest === manifests.new ? 'new' : null
  if (!which) return 'a manifest of neither export'
  const listed =
    (JSON.parse(manifest) as { exports: Array<{ files: Array<{ path: string; sha256: string }> }> })
      .exports[0]?.files ?? []
  for (const f of listed) {
    const content = await readFile(join(dir, f.path)).catch(() => null)
    if (content === null || sha(content) !== f.sha256) return `${which} manifest, ${f.path} does not match it`
  }
  const expected = [...listed.map((f) => f.path), 'rigfit-export.json', USER_FILE].sort()
  const present = await tree(dir)
  if (JSON.stringify(present) !== JSON.stringify(expected))
    return `${which} manifest beside ${present.join(', ')}`
  return which
}

describe('rigfit export --out DIR --force replaces the folder as one change', () => {
  let template: string
  const manifests = { old: '', new: '' }
  beforeAll(async () => {
    const base = await mkdtemp(join(tmpdir(), 'rigfit-replace-'))
    template = join(base, 'old')
    expect(rigfit(exportArgs(OLD, template)).code).toBe(0)
    await writeFile(join(template, USER_FILE), 'my notes\n')
    manifests.old = await readFile(join(template, 'rigfit-export.json'), 'utf8')
    const done = join(base, 'new')
    await cp(template, done, { recursive: true })
    expect(rigfit(exportArgs(NEW, done, true)).code).toBe(0)
    manifests.new = await readFile(join(done, 'rigfit-export.json'), 'utf8')
  })

  async function oldFolder(): Promise<string> {
    const dir = join(await mkdtemp(join(tmpdir(), 'rigfit-replace-')), 'out')
    await cp(template, dir, { recursive: true })
    return dir
  }

  it('removes the earlier files its manifest lists, keeps the rest and names them in a warning', async () => {
    const dir = await oldFolder()
    expect(await tree(dir)).toContain('adapter_config.json')
    const r = rigfit([...exportArgs(NEW, dir, true), '--json'])
    expect(r.code).toBe(0)
    const warnings = (JSON.parse(r.stdout) as { warnings: Array<{ id: string; message: string }> }).warnings
    expect(warnings.find((w) => w.id === 'export-kept-files')?.message).toContain(USER_FILE)
    expect(warnings.find((w) => w.id === 'export-removed-files')?.message).toContain('adapter_config.json')
    expect(await folderState(dir, manifests)).toBe('new')
    // Nothing is left beside the folder: no staging set, no old copy, no lock.
    expect(await readdir(join(dir, '..'))).toEqual(['out'])
  })

  it('a live export holding the lock makes another fail with exit 8, writing nothing', async () => {
    const dir = await oldFolder()
    const holder = spawn('sleep', ['30'])
    try {
      await writeFile(join(dir, '..', '.out.rigfit-lock'), `${holder.pid}\n`)
      const r = rigfit(exportArgs(NEW, dir, true))
      expect(r.code).toBe(8)
      expect(r.stderr).toMatch(/another rigfit export \(process \d+\) is writing/)
      expect(await folderState(dir, manifests)).toBe('old')
    } finally {
      const gone = new Promise((resolve) => holder.on('exit', resolve))
      holder.kill('SIGKILL')
      await gone
    }
    // A lock whose owner is gone (a killed export) is taken over.
    const r = rigfit(exportArgs(NEW, dir, true))
    expect(r.code).toBe(0)
    expect(await folderState(dir, manifests)).toBe('new')
  })

  it('two exports into one folder at once: each succeeds or exits 8, and the folder is one of them', async () => {
    for (let round = 0; round < 3; round += 1) {
      const dir = await oldFolder()
      const run = (args: string[]) =>
        new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, exportArgs(args, dir, true), { stdio: 'ignore' })
          child.on('exit', (code) => resolve(code))
        })
      const codes = await Promise.all([run(NEW), run(NEW)])
      for (const code of codes) expect([0, 8]).toContain(code)
      expect(codes).toContain(0)
      expect(await folderState(dir, manifests)).toBe('new')
    }
  })

  it('kill -9 at random moments never leaves a mixed folder (60 trials)', async () => {
    const outcomes: Record<string, number> = {}
    const timed = Date.now()
    expect(rigfit(exportArgs(NEW, await oldFolder(), true)).code).toBe(0)
    const runMs = Date.now() - timed
    for (let trial = 0; trial < 60; trial += 1) {
      const dir = await oldFolder()
      const parent = join(dir, '..')
      const child: ChildProcess = spawn(process.execPath, exportArgs(NEW, dir, true), { stdio: 'ignore' })
      const exited = new Promise((resolve) => child.on('exit', resolve))
      let running = true
      child.on('exit', () => {
        running = false
      })
      if (trial % 2 === 0) {
        // Any moment of the run: start-up, planning, writing or swapping.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * runMs))
      } else {
        // A moment of the file work: from when the new set appears beside the folder, a random few milliseconds on.
        while (running && !(await readdir(parent)).some((n) => n.startsWith('.out.rigfit-stage'))) {
          await new Promise((resolve) => setImmediate(resolve))
        }
        const until = Date.now() + Math.random() * 4
        while (Date.now() < until) {}
      }
      child.kill('SIGKILL')
      await exited
      let state = (await stat(dir).catch(() => null)) ? await folderState(dir, manifests) : 'missing'
      if (state === 'missing') {
        // Killed between the swap's two renames: the next export's first step completes it.
        await recoverExportFolder(dir)
        state = `recovered ${await folderState(dir, manifests)}`
      }
      outcomes[state] = (outcomes[state] ?? 0) + 1
      await rm(parent, { recursive: true, force: true })
    }
    console.log(`export --force killed with SIGKILL 60 times: ${JSON.stringify(outcomes)}`)
    const states = Object.keys(outcomes)
    for (const state of states) expect(['old', 'new', 'recovered new']).toContain(state)
  }, 600_000)
})
