import type { LoadedPack, Rule } from '@rigfit/core'

/** One rule's effect in a few words: `set precision = "bf16-mixed"`, `cap dataloaderWorkers ≤ spareCores`. */
export function describeEvent(rule: Rule): string {
  const event = rule.event
  const show = (value: unknown) =>
    value !== null && typeof value === 'object' && 'fact' in value
      ? `fact ${(value as { fact: string }).fact}`
      : JSON.stringify(value)
  switch (event.type) {
    case 'set':
      return `set ${event.params.setting} = ${show(event.params.value)}`
    case 'cap':
      return `cap ${event.params.setting} <= ${show(event.params.max)}`
    case 'forbid':
      return `forbid ${event.params.setting} = ${show(event.params.value)}`
    case 'warn':
      return `warn ${event.params.id}`
    case 'suggest':
      return `suggest ${event.params.id}`
  }
}

/** How a pack is named in listings: name, version, layer and where it came from. */
export function describePack(pack: LoadedPack): string {
  const from = pack.origin.plugin
    ? `plugin ${pack.origin.plugin}`
    : pack.origin.kind === 'core'
      ? 'built in'
      : pack.origin.path
  return `${pack.meta.name} ${pack.meta.version} (${pack.layer} layer, ${pack.rules.length} rules, ${from})`
}
