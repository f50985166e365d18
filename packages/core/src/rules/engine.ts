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
 * json-rules-engine set up for one set of packs, built once and reused for every run: unknown facts are errors, and
 * the only operator beyond the library's own is `startsWith`. Packs cannot add operators or run code.
 *
 * A rule fires when its pack's appliesTo and its own conditions both hold. A run first evaluates the packs'
 * appliesTo alone, then the rules of the packs that apply, in an engine built for that set of packs and kept for
 * the next run with the same set: a machine meets one or two vendor packs, so most rules (another vendor's) are
 * never built or evaluated. What fires is what one engine of every rule joined with its pack's appliesTo fires.
 */
export class RulesEngine {
  /** Rule engines by the set of packs that apply (their indices), built on first use. */
  private readonly ruleEngines = new Map<string, Promise<Engine>>()

  private constructor(
    private readonly probes: Engine,
    private readonly rulesByName: Map<string, CompiledRule>,
    private readonly packsByProbe: Map<string, LoadedPack>,
    readonly packs: readonly LoadedPack[],
  ) {}

  static async create(packs: readonly LoadedPack[]): Promise<RulesEngine> {
    const probes = await newEngine()
    const rulesByName = new Map<string, CompiledRule>()
    const packsByProbe = new Map<string, LoadedPack>()
    packs.forEach((pack, packIndex) => {
      const applies = pack.appliesTo
      if (applies) {
        const probe = `${packIndex}#applies`
        packsByProbe.set(probe, pack)
        probes.addRule({ name: probe, conditions: clone(applies), event: { type: 'applies' } })
      }
      const packReads = factsReadBy(applies)
      for (const rule of pack.rules) {
        const reads = factsReadByEvent(rule.event, factsReadBy(rule.conditions, new Set(packReads)))
        rulesByName.set(ruleName(packIndex, rule), { pack, rule, reads: [...reads].sort() })
      }
    })
    return new RulesEngine(probes, rulesByName, packsByProbe, packs)
  }

  async run(facts: Facts): Promise<EngineRun> {
    const applies = new Map<LoadedPack, boolean>(this.packs.map((pack) => [pack, pack.appliesTo === null]))
    if (this.packsByProbe.size > 0) {
      const { results } = await this.probes.run({ ...facts })
      for (const result of results) {
        const pack = this.packsByProbe.get(result.name)
        if (pack) applies.set(pack, true)
      }
    }
    const applying = this.packs.flatMap((pack, index) => (applies.get(pack) ? [index] : []))
    const engine = await this.ruleEngineFor(applying)
    const { results } = await engine.run({ ...facts })
    const fired = results.flatMap((result) => this.rulesByName.get(result.name) ?? [])
    return { fired, applies }
  }

  /** The engine of the rules of the packs at these indices, each rule under its own conditions. */
  private ruleEngineFor(packIndices: readonly number[]): Promise<Engine> {
    const key = packIndices.join(',')
    let engine = this.ruleEngines.get(key)
    if (!engine) {
      engine = newEngine().then((built) => {
        for (const packIndex of packIndices) {
          for (const rule of this.packs[packIndex]?.rules ?? []) {
            built.addRule({
              name: ruleName(packIndex, rule),
              conditions: clone(rule.conditions),
              event: { type: rule.event.type },
            })
          }
        }
        return built
      })
      this.ruleEngines.set(key, engine)
    }
    return engine
  }
}

const ruleName = (packIndex: number, rule: Rule) => `${packIndex}/${rule.id}`

async function newEngine(): Promise<Engine> {
  const { Engine: JsonRulesEngine } = await import('json-rules-engine')
  const engine = new JsonRulesEngine([], { allowUndefinedFacts: false, allowUndefinedConditions: false })
  engine.addOperator<unknown, string>(
    'startsWith',
    (fact, prefix) => typeof fact === 'string' && fact.startsWith(prefix),
  )
  return engine
}

/** json-rules-engine keeps the objects it is given; packs are frozen, so it gets copies. */
function clone<T>(value: T): T {
  return structuredClone(value) as T
}
