#!/usr/bin/env node
import module from 'node:module'

// Cache compiled bytecode between runs (Node >= 22.1): module loading dominates a short command's start-up.
module.enableCompileCache?.()
// --version and --help answered from the help oclif rendered at build time, where they print the same.
const { fastStart } = await import('../bundle/fast-start.js')
if (!fastStart(process.argv.slice(2))) {
  // The bundled build (`pnpm build`): oclif and the commands in a few files rather than hundreds of modules.
  const { execute } = await import('../bundle/main.js')
  await execute({ dir: import.meta.url })
}
