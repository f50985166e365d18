import type { PackProblem } from '@rigfit/core'
import type { PluginRoot } from '@rigfit/core/node'

/**
 * The pack folders of the bundled plugins, as their `rigfit:packs` hooks answered when rigfit was built
 * (bundle/start.json), set when a command starts without loading the plugins (src/command-start.ts). Unset, the
 * hooks are asked.
 */
/** The plugins' pack folders, and the plugins whose hook failed or answered nonsense. */
export interface PackRoots {
  roots: PluginRoot[]
  problems: PackProblem[]
}

let recorded: PackRoots | undefined

export function useRecordedPackRoots(roots: PluginRoot[]): void {
  recorded = { roots, problems: [] }
}

export function recordedPackRoots(): PackRoots | undefined {
  return recorded
}
