import { execFileSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REPO } from './helpers/engines.js'
import { holdMachine, MACHINE_TURN_MS } from './helpers/machine-lock.js'
import { run } from './helpers/processes.js'

// Installing from a clone, as a new user does: the README's install command on a clean HOME, on a machine whose
// `node` is too old, then `rigfit` from another folder; and the packed tarball installed offline with npm.

const work = mkdtempSync(join(tmpdir(), 'rigfit-e2e-install-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** The shell block the README marks as the install command, exactly as a reader copies it. */
function readmeInstallCommand(): string {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8')
  const block = /<!-- e2e: install -->\s*```sh\n([\s\S]*?)```/.exec(readme)?.[1]
  if (!block) throw new Error('README.md has no ```sh block after <!-- e2e: install -->')
  return block
}

/** A folder holding a `node` that says it is Node 20 and refuses to run anything, as an old system Node would. */
function oldNodeDir(): string {
  const dir = join(work, 'old-node')
  mkdirSync(dir, { recursive: true })
  const node = join(dir, 'node')
  writeFileSync(
    node,
    '#!/bin/sh\nif [ "$1" = "--version" ]; then echo v20.20.2; exit 0; fi\necho "node 20 cannot run this" >&2\nexit 1\n',
  )
  chmodSync(node, 0o755)
  return dir
}

const pnpm = (args: string[]) => execFileSync('pnpm', args, { cwd: REPO, encoding: 'utf8' }).trim()
const DEADLINE = 1_500_000

describe('installing rigfit', () => {
  let release: (() => void) | undefined
  beforeAll(async () => {
    release = await holdMachine(MACHINE_TURN_MS)
  }, MACHINE_TURN_MS + 60_000)
  afterAll(() => release?.())

  it("runs the README's install command on a clean HOME with an old node first on PATH; rigfit then works from another folder", {
    timeout: DEADLINE,
  }, async () => {
    // A fresh clone of this commit (what CI checks out), with no node_modules and no build.
    const clone = join(work, 'clone')
    execFileSync('git', ['clone', '--quiet', '--no-hardlinks', REPO, clone])
    const home = join(work, 'home')
    mkdirSync(home)
    // The Node 24 the script would fetch from the registry, already in its toolchain folder: the test stays
    // offline, and still takes the path of a machine whose own node is too old.
    const toolchain = join(work, 'toolchain')
    mkdirSync(join(toolchain, 'node_modules', '.bin'), { recursive: true })
    symlinkSync(process.execPath, join(toolchain, 'node_modules', '.bin', 'node'))
    const env = {
      PATH: [
        oldNodeDir(),
        dirname(execFileSync('which', ['pnpm'], { encoding: 'utf8' }).trim()),
        '/usr/bin',
        '/bin',
      ].join(':'),
      HOME: home,
      LANG: 'C.UTF-8',
      RIGFIT_TOOLCHAIN: toolchain,
      // Packages come from this machine's store and the build from this checkout's turbo cache when it holds it.
      npm_config_store_dir: pnpm(['store', 'path']),
      npm_config_prefer_offline: 'true',
      TURBO_CACHE_DIR: join(REPO, '.turbo', 'cache'),
      NO_COLOR: '1',
    }
    const install = await run('bash', ['-c', readmeInstallCommand()], {
      cwd: clone,
      env,
      deadlineMs: DEADLINE - 60_000,
    })
    expect(install.code, `${install.stdout}\n${install.stderr}`).toBe(0)
    // The command ran `rigfit analyze` once installed.
    expect(install.stdout).toContain('HARDWARE ANALYSIS COMPLETE')

    const launcher = readFileSync(join(home, '.local', 'bin', 'rigfit'), 'utf8')
    expect(launcher).toContain(join(clone, 'apps', 'cli', 'bin', 'run.js'))
    // A new login shell finds `rigfit` on PATH (the install added ~/.local/bin to ~/.profile) from any folder,
    // and it runs on Node 24 although the old node came first when it was installed.
    const elsewhere = mkdtempSync(join(work, 'elsewhere-'))
    const login = await run('bash', ['-lc', 'rigfit --version && rigfit rules list --json'], {
      cwd: elsewhere,
      env: { HOME: home, PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' },
      deadlineMs: 120_000,
    })
    expect(login.code, login.stderr).toBe(0)
    expect(login.stdout).toMatch(/^rigfit\/0\.\d+\.\d+ \S+ node-v(2[2-9]|[3-9]\d)\./)
    const packs = JSON.parse(login.stdout.slice(login.stdout.indexOf('\n') + 1)).packs
    expect(packs.filter((p: { layer: string }) => p.layer === 'vendor').length).toBeGreaterThanOrEqual(9)

    // Run again, it leaves one PATH line; a `rigfit` it did not write is never replaced.
    const again = await run('bash', ['scripts/install.sh'], {
      cwd: clone,
      env,
      deadlineMs: DEADLINE - 60_000,
    })
    expect(again.code, again.stderr).toBe(0)
    const profile = readFileSync(join(home, '.profile'), 'utf8')
    expect(profile.match(/scripts\/install\.sh/g)).toHaveLength(1)
    writeFileSync(join(home, '.local', 'bin', 'rigfit'), '#!/bin/sh\necho mine\n')
    const refused = await run('bash', ['scripts/install.sh'], {
      cwd: clone,
      env,
      deadlineMs: DEADLINE - 60_000,
    })
    expect(refused.code).toBe(8)
    expect(refused.stderr).toContain('was not written by this script')
    expect(readFileSync(join(home, '.local', 'bin', 'rigfit'), 'utf8')).toBe('#!/bin/sh\necho mine\n')
  })

  it('packs a tarball that npm installs offline, with an empty cache; the installed rigfit loads the vendor packs', {
    timeout: DEADLINE,
  }, async () => {
    const out = join(work, 'pack')
    const tarball = execFileSync(process.execPath, [join(REPO, 'scripts', 'pack-cli.mjs'), out], {
      cwd: REPO,
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
      .pop() as string
    expect(tarball).toMatch(/rigfit-\d+\.\d+\.\d+\.tgz$/)
    const prefix = join(work, 'prefix')
    const install = await run(
      'npm',
      [
        'install',
        '-g',
        '--offline',
        '--prefix',
        prefix,
        '--cache',
        join(work, 'npm-cache'),
        '--no-audit',
        '--no-fund',
        tarball,
      ],
      { cwd: work, env: process.env, deadlineMs: DEADLINE - 60_000 },
    )
    expect(install.code, install.stderr).toBe(0)

    const rigfit = join(prefix, 'bin', 'rigfit')
    const elsewhere = mkdtempSync(join(work, 'elsewhere-'))
    const env = { ...process.env, HOME: join(work, 'tar-home'), XDG_CONFIG_HOME: join(work, 'tar-config') }
    const version = execFileSync(rigfit, ['--version'], { cwd: elsewhere, env, encoding: 'utf8' })
    expect(version).toMatch(/^rigfit\/0\.\d+\.\d+ /)
    const plugins = execFileSync(rigfit, ['plugins'], {
      cwd: elsewhere,
      env: { ...env, NO_COLOR: '1' },
      encoding: 'utf8',
    })
    for (const family of ['rtx50', 'rtx40', 'rtx30', 'rtx20', 'datacenter', 'rdna', 'apple', 'cpu', 'intel'])
      expect(plugins).toContain(`@rigfit/plugin-${family}`)
    const { packs, problems } = JSON.parse(
      execFileSync(rigfit, ['rules', 'list', '--json'], { cwd: elsewhere, env, encoding: 'utf8' }),
    )
    expect(problems).toEqual([])
    expect(packs.map((p: { meta: { name: string } }) => p.meta.name)).toEqual(
      expect.arrayContaining(['core', 'rtx40', 'datacenter', 'apple', 'cpu']),
    )
    // The same plan (bundled rule packs and catalogs at work) as this checkout's CLI makes.
    const args = ['plan', '--gpu', 'RTX 4090', '--model', 'llama-3.2-1b', '--lora-rank', '16', '--json']
    const installed = JSON.parse(execFileSync(rigfit, args, { cwd: elsewhere, env, encoding: 'utf8' }))
    const local = JSON.parse(
      execFileSync(process.execPath, [join(REPO, 'apps', 'cli', 'bin', 'run.js'), ...args], {
        env,
        encoding: 'utf8',
      }),
    )
    // Only the time it was made differs.
    expect({ ...installed, createdAt: null }).toEqual({ ...local, createdAt: null })
  })
})
