#!/usr/bin/env node
// Bundles the built CLI (dist/, from `tsc -b`) into bundle/: one file per oclif entry point (each command, each
// hook) plus shared chunks, so a start-up reads a handful of files instead of hundreds of modules. The workspace
// packages, zod, the rules engine and the other libraries are inlined; what must stay a package on disk stays
// external: oclif's plugins (oclif loads plugins by name), the vendor plugins (they hold the rule packs),
// systeminformation (the profiler runs it in a worker by path). Heavy modules reached through `import()` (vega for
// reports, the dataset readers, the exporters for --generate-configs, the monitor) stay in chunks of their own.
// Run from apps/cli after `tsc -b`.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { build } from 'rolldown'

const OUT = 'bundle'
// oclif reaches for typescript, ts-node, tsx and Yarn's pnpapi only when they are installed, to run TypeScript
// plugins in development: they stay out of the bundle.
const EXTERNAL = [
  /^@oclif\/plugin-/,
  /^@rigfit\/plugin-/,
  /^systeminformation(\/|$)/,
  /^canvas$/,
  /^playwright/,
  /^(typescript|ts-node|tsx|pnpapi)(\/|$)/,
]

function* jsFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* jsFiles(path)
    else if (entry.name.endsWith('.js')) yield path
  }
}

// bundle/fast-start.js answers --version and --help where it can (bundle/help.json, scripts/help-snapshot.mjs),
// bundle/main.js is what bin/run.js starts otherwise; bundle/commands/<id>.js and bundle/hooks/<name>.js mirror dist/,
// where oclif's manifest expects them.
const input = Object.fromEntries(
  ['dist/main.js', 'dist/fast-start.js', ...jsFiles('dist/commands'), ...jsFiles('dist/hooks')].map(
    (file) => [relative('dist', file).replace(/\.js$/, ''), file],
  ),
)

// Built beside the old bundle and swapped in: a rigfit started during a rebuild finds one bundle or the other.
const next = `${OUT}.next-${process.pid}`
rmSync(next, { recursive: true, force: true })
await build({
  input,
  platform: 'node',
  external: (id) => EXTERNAL.some((pattern) => pattern.test(id)),
  logLevel: 'warn',
  output: {
    dir: next,
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    sourcemap: false,
    // ASCII only: V8 keeps a source with any other character (even in a comment) as a two-byte string, which
    // costs its decoding and compilation at every start. Doc comments go (nothing reads them in the bundle);
    // licences stay.
    charset: 'ascii',
    comments: { legal: true, annotation: true, jsdoc: false },
  },
})
// The monitor starts its trainer watchdog as a script of its own, by a path beside the module that starts it
// (`new URL('./watchdog.js', import.meta.url)`): it goes beside every bundled file that holds that module.
const WATCHDOG = join('node_modules', '@rigfit', 'monitor', 'dist', 'process', 'watchdog.js')
for (const file of jsFiles(next)) {
  if (readFileSync(file, 'utf8').includes('./watchdog.js'))
    copyFileSync(WATCHDOG, join(dirname(file), 'watchdog.js'))
}
// `rigfit calibrate` runs rigfit's own trainer (examples/pytorch) and the Transformers stack's measuring script
// (examples/calibrate/hf_stack.py) from `bundle/trainer/`, so an installed rigfit measures without a checkout.
const TRAINER = join(next, 'trainer')
mkdirSync(TRAINER, { recursive: true })
for (const dir of ['../../examples/pytorch', '../../examples/calibrate']) {
  for (const name of readdirSync(dir)) {
    if (dir.endsWith('pytorch') ? name.endsWith('.py') : name === 'hf_stack.py')
      copyFileSync(join(dir, name), join(TRAINER, name))
  }
}
const old = `${OUT}.old-${process.pid}`
if (existsSync(OUT)) renameSync(OUT, old)
renameSync(next, OUT)
rmSync(old, { recursive: true, force: true })
console.log(`bundle: ${Object.keys(input).length} entry points into ${OUT}/`)
