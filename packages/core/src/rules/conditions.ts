import type { FactName } from '../schemas/facts.js'
import type { ConditionTree, RuleEvent, TopLevelConditions } from '../schemas/rule-pack.js'

/** Every fact a condition tree reads, including facts it compares against (`value: { fact }`). */
export function factsReadBy(
  conditions: TopLevelConditions | ConditionTree | null,
  into = new Set<FactName>(),
): Set<FactName> {
  if (!conditions) return into
  if ('all' in conditions) for (const child of conditions.all) factsReadBy(child, into)
  else if ('any' in conditions) for (const child of conditions.any) factsReadBy(child, into)
  else if ('not' in conditions) factsReadBy(conditions.not, into)
  else {
    into.add(conditions.fact)
    const value = conditions.value
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) into.add(value.fact)
  }
  return into
}

/** Facts an event takes its value from (`"value": { "fact": "physicalCores" }`). */
export function factsReadByEvent(event: RuleEvent, into = new Set<FactName>()): Set<FactName> {
  const params = event.params as Record<string, unknown>
  for (const key of ['value', 'max']) {
    const value = params[key]
    if (value !== null && typeof value === 'object' && 'fact' in value)
      into.add((value as { fact: FactName }).fact)
  }
  return into
}
