import type { Engine } from 'json-rules-engine'
import type { LoadedPack } from '../packs/loaded-pack.js'
import type { FactName, Facts } from '../schemas/facts.js'
import type { Rule } from '../schemas/rule-pack.js'
import { factsReadBy, factsReadByEvent } from './conditions.js'

export interface CompiledRule {
  pack: LoadedPack
  rule: Rule
  /** The facts the rule and its pack's appliesTo read: recorded in the provenance of what it decides. */
  reads: FactName[]
}

export interface EngineRun {
  fired: CompiledRule[]
  applies: Map<LoadedPack, boolean>
}

/**
 * json-rules-engine set up for one set of packs, built once and reused for every run: each rule's conditions are
 * joined with its pack's appliesTo, unknown facts are errors, and the only operator beyond the library's own
 * is `startsWith`. Packs cannot add operators or run code.
 */
export class RulesEngine {
  private constructor(
    private readonly engine: Engine,
    private readonly rulesByName: Map<string, CompiledRule>,
    private readonly packsByProbe: Map<string, LoadedPack>,
    readonly packs: readonly LoadedPack[],
  ) {}

  static async create(packs: readonly LoadedPack[]): Promise<RulesEngine> {
    const { Engine: JsonRulesEngine } = await import('json-rules-engine')
    const engine = new JsonRulesEngine([], { allowUndefinedFacts: false, allowUndefinedConditions: false })
    engine.addOperator<unknown, string>(
      'startsWith',
      (fact, prefix) => typeof fact === 'string' && fact.startsWith(prefix),
    )
    const rulesByName = new Map<string, CompiledRule>()
    const packsByProbe = new Map<string, LoadedPack>()
    packs.forEach((pack, packIndex) => {
      const applies = pack.appliesTo
      if (applies) {
        const probe = `${packIndex}#applies`
        packsByProbe.set(probe, pack)
        engine.addRule({ name: probe, conditions: clone(applies), event: { type: 'applies' } })
      }
      const packReads = factsReadBy(applies)
      for (const rule of pack.rules) {
        const name = `${packIndex}/${rule.id}`
        const reads = factsReadByEvent(rule.event, factsReadBy(rule.conditions, new Set(packReads)))
        rulesByName.set(name, { pack, rule, reads: [...reads].sort() })
        const conditions = applies
          ? { all: [clone(applies), clone(rule.conditions)] }
          : clone(rule.conditions)
        engine.addRule({ name, conditions, event: { type: rule.event.type } })
      }
    })
    return new RulesEngine(engine, rulesByName, packsByProbe, packs)
  }

  async run(facts: Facts): Promise<EngineRun> {
    const { results } = await this.engine.run({ ...facts })
    const fired: CompiledRule[] = []
    const applies = new Map<LoadedPack, boolean>(this.packs.map((pack) => [pack, pack.appliesTo === null]))
    for (const result of results) {
      const probe = this.packsByProbe.get(result.name)
      if (probe) {
        applies.set(probe, true)
        continue
      }
      const compiled = this.rulesByName.get(result.name)
      if (compiled) fired.push(compiled)
    }
    return { fired, applies }
  }
}

/** json-rules-engine keeps the objects it is given; packs are frozen, so it gets copies. */
function clone<T>(value: T): T {
  return structuredClone(value) as T
}
