#!/usr/bin/env node
// Packs the built CLI into a tarball that installs without a registry: `npm install -g ./rigfit-<version>.tgz`
// works offline. The bundle (apps/cli/bundle) already holds the workspace libraries; what must stay a package on
// disk (oclif's plugins, the vendor plugins with their rule packs, the core pack, systeminformation) is deployed
// with its own dependencies into a staging folder and bundled into the tarball (bundleDependencies), workspace
// versions written out. Run after `pnpm build`:
//   node scripts/pack-cli.mjs [OUT_DIR]      (default: the current folder; prints the tarball's path)
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repo = fileURLToPath(new URL('..', import.meta.url))
const out = resolve(process.argv[2] ?? '.')
if (!existsSync(join(repo, 'apps/cli/bundle/main.js'))) {
  console.error('pack-cli: apps/cli is not built; run `pnpm build` first')
  process.exit(1)
}

const stage = mkdtempSync(join(tmpdir(), 'rigfit-pack-'))
const run = (command, args, cwd) =>
  execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
try {
  // A flat node_modules of real folders (no links into a store), as npm lays out a bundled package.
  run(
    'pnpm',
    [
      '--filter',
      'rigfit',
      'deploy',
      '--offline',
      '--prod',
      '--legacy',
      '--config.node-linker=hoisted',
      stage,
    ],
    repo,
  )
  const manifestPath = join(stage, 'package.json')
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'))
  const versionOf = (name) =>
    JSON.parse(readFileSync(join(stage, 'node_modules', name, 'package.json'), 'utf8')).version
  for (const [name, range] of Object.entries(manifest.dependencies)) {
    if (range.startsWith('workspace:')) manifest.dependencies[name] = versionOf(name)
  }
  manifest.bundleDependencies = Object.keys(manifest.dependencies)
  delete manifest.devDependencies
  delete manifest.scripts
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`)
  mkdirSync(out, { recursive: true })
  const packed = run(
    'pnpm',
    ['pack', '--json', '--config.node-linker=hoisted', '--pack-destination', out],
    stage,
  )
  const tarball = JSON.parse(packed).filename
  console.log(tarball)
} finally {
  rmSync(stage, { recursive: true, force: true })
}
