import type { PackProblem } from '@rigfit/core'
import type { PluginRoot } from '@rigfit/core/node'

/**
 * The pack folders of the bundled plugins, as their `rigfit:packs` hooks answered when rigfit was built
 * (bundle/start.json), set when a command starts without loading the plugins (src/command-start.ts). Unset, the
 * hooks are asked.
 */
let recorded: { roots: PluginRoot[]; problems: PackProblem[] } | undefined

export function useRecordedPackRoots(roots: PluginRoot[]): void {
  recorded = { roots, problems: [] }
}

export function recordedPackRoots(): { roots: PluginRoot[]; problems: PackProblem[] } | undefined {
  return recorded
}
