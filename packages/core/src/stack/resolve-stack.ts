import type { StackMechanism, StackMechanisms, StackRef } from '../schemas/stack.js'
import { compareVersions, formatStackRef } from './stack-ref.js'
import { STACK_TABLE, type StackFact } from './stack-table.js'

export interface ResolvedStack {
  ref: StackRef
  mechanisms: StackMechanisms
  /** The table row that decided each mechanism. */
  facts: Record<StackMechanism, StackFact>
}

const inRange = (fact: StackFact, version: string): boolean =>
  (fact.from === undefined || compareVersions(version, fact.from) >= 0) &&
  (fact.before === undefined || compareVersions(version, fact.before) < 0)

// A handful of stack references per process: each resolves once, never per estimate.
const resolved = new Map<string, ResolvedStack>()

/** Every mechanism the stack's release sets, from the stack table (later facts win). */
export function resolveStack(ref: StackRef): ResolvedStack {
  const key = formatStackRef(ref)
  const cached = resolved.get(key)
  if (cached) return cached
  const mechanisms: Partial<StackMechanisms> = {}
  const facts: Partial<Record<StackMechanism, StackFact>> = {}
  for (const fact of STACK_TABLE) {
    if (fact.stack !== ref.name || !inRange(fact, ref.version)) continue
    Object.assign(mechanisms, fact.set)
    for (const mechanism of Object.keys(fact.set) as StackMechanism[]) facts[mechanism] = fact
  }
  const result = {
    ref,
    mechanisms: mechanisms as StackMechanisms,
    facts: facts as Record<StackMechanism, StackFact>,
  }
  resolved.set(key, result)
  return result
}
