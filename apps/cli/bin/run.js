#!/usr/bin/env node
import module from 'node:module'

// Cache compiled bytecode between runs (Node >= 22.1): module loading dominates a short command's start-up.
module.enableCompileCache?.()
const { execute } = await import('@oclif/core')

await execute({ dir: import.meta.url })
