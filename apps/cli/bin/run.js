#!/usr/bin/env node
import module from 'node:module'

// Cache compiled bytecode between runs (Node >= 22.1): module loading dominates a short command's start-up.
module.enableCompileCache?.()
// --version and --help answered from the help oclif rendered at build time, where they print the same.
const { fastStart, userPluginsPossible } = await import('../bundle/fast-start.js')
const argv = process.argv.slice(2)
if (!fastStart(argv)) {
  // The bundled build (`pnpm build`): oclif and the commands in a few files rather than hundreds of modules;
  // rigfit's own commands start without loading the plugins where no user plugin can be installed.
  const { start } = await import('../bundle/main.js')
  await start(import.meta.url, argv, userPluginsPossible())
}
