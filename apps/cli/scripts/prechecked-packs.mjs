#!/usr/bin/env node
// Validates the core pack and every bundled vendor plugin's pack in full, once, and writes them into
// dist/prechecked-packs.json with a hash, so that a start-up loads them without validating them again; the same for
// the plugins' GPU catalogs (catalog.json) into dist/prechecked-catalogs.json.
// A pack or catalog that does not validate fails the build. Run from apps/cli after `tsc -b`.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { buildPrecheckedBundle, buildPrecheckedCatalogs, CORE_PACK_ROOT } from '@rigfit/core/node'

const manifest = JSON.parse(readFileSync('package.json', 'utf8'))
const require = createRequire(join(process.cwd(), 'package.json'))
// The vendor plugins rigfit ships with: the @rigfit/plugin-* entries of oclif.plugins, whose root is their pack.
const pluginRoots = manifest.oclif.plugins
  .filter((name) => name.startsWith('@rigfit/plugin-'))
  .map((name) => dirname(require.resolve(`${name}/package.json`)))
mkdirSync('dist', { recursive: true })
writeFileSync(join('dist', 'prechecked-packs.json'), buildPrecheckedBundle([CORE_PACK_ROOT, ...pluginRoots]))
const catalogs = pluginRoots.map((root) => join(root, 'catalog.json'))
writeFileSync(join('dist', 'prechecked-catalogs.json'), buildPrecheckedCatalogs(catalogs))
console.log(
  `prechecked-packs: ${1 + pluginRoots.length} packs and their GPU catalogs validated into dist/prechecked-packs.json and dist/prechecked-catalogs.json`,
)
