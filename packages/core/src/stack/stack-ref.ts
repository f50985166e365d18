import { RigfitError } from '../errors.js'
import { closeMatches } from '../model/close-matches.js'
import { StackName, type StackRef, StackVersion } from '../schemas/stack.js'
import { CURRENT_STACK_VERSION } from './stack-table.js'

const STACK_NAMES = StackName.options

/** Compares two release numbers part by part (`4.9` < `4.10`); a missing part counts as 0. */
export function compareVersions(a: string, b: string): number {
  const x = a.split('.').map(Number)
  const y = b.split('.').map(Number)
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0)
    if (d !== 0) return d
  }
  return 0
}

/** `NAME@VERSION`. */
export const formatStackRef = (ref: StackRef): string => `${ref.name}@${ref.version}`

/**
 * Parses `NAME[@VERSION]` (`hf`, `hf@4.40`, `litgpt@0.4.9`); without a version, the newest release the stack table
 * describes. A wrong name gets the closest names, a wrong version the form it takes; `where` names the flag or the
 * file and field the text came from.
 */
export function parseStackRef(
  text: string,
  where = '--stack',
  kind: 'usage' | 'validation' = 'usage',
): StackRef {
  const trimmed = text.trim()
  const at = trimmed.indexOf('@')
  const name = (at < 0 ? trimmed : trimmed.slice(0, at)).toLowerCase()
  const version = at < 0 ? undefined : trimmed.slice(at + 1)
  const parsedName = StackName.safeParse(name)
  if (!parsedName.success) {
    const close = closeMatches(name, STACK_NAMES, 2)
    throw new RigfitError(kind, 'E_STACK', `${where}: unknown stack "${name}"`, {
      suggestion: `${close.length > 0 ? `Did you mean ${close.join(' or ')}? ` : ''}Stacks: ${STACK_NAMES.join(', ')} (hf = Transformers Trainer with PEFT, plain = a hand-written PyTorch loop).`,
    })
  }
  if (version === undefined) return { name: parsedName.data, version: CURRENT_STACK_VERSION[parsedName.data] }
  if (!StackVersion.safeParse(version).success) {
    throw new RigfitError(kind, 'E_STACK', `${where}: "${version}" is not a release number of ${name}`, {
      suggestion: `Write the release as numbers, e.g. ${name}@${CURRENT_STACK_VERSION[parsedName.data]}, or give ${name} alone for the newest release.`,
    })
  }
  return { name: parsedName.data, version }
}
