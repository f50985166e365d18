/**
 * The CLI's entry module. Bundled (scripts/bundle.mjs) together with the commands, so that the start-up and the
 * commands share one copy of oclif, read from a few files.
 */
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { execute } from '@oclif/core'
import { z } from 'zod'
import { commandStart } from './command-start.js'
import { useRecordedPackRoots } from './lib/recorded-pack-roots.js'

export { execute }

// A command parses each input once: zod's compiled fast path costs more to generate than it saves here.
z.config({ jitless: true })

/**
 * Runs rigfit: one of its own commands without loading the plugins where that changes nothing, else oclif in
 * full. `userPluginsPossible`: whether oclif's data folder may name user or linked plugins (src/fast-start.ts).
 */
export async function start(binUrl: string, argv: string[], userPluginsPossible: boolean): Promise<unknown> {
  const fast = commandStart(argv, dirname(dirname(fileURLToPath(binUrl))), userPluginsPossible)
  if (!fast) return execute({ dir: binUrl, args: argv })
  useRecordedPackRoots(fast.packRoots)
  return execute({ loadOptions: fast.loadOptions, args: argv })
}
