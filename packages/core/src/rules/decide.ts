import { RigfitError } from '../errors.js'
import type { LoadedPack } from '../packs/loaded-pack.js'
import type {
  AdviceDecision,
  CapDecision,
  Decisions,
  ForbidDecision,
  OverriddenValue,
  Provenance,
  SettingDecision,
} from '../schemas/decisions.js'
import { type FactName, Facts } from '../schemas/facts.js'
import { SETTING_VALUES, type SettingName, type SettingValue, settingKind } from '../schemas/rule-pack.js'
import { type CompiledRule, RulesEngine } from './engine.js'
import { byPrecedence } from './precedence.js'

/**
 * Runs the packs on one set of facts and resolves what they say into decisions: for each setting the winning
 * value (by precedence, skipping forbidden values, lowered to the lowest cap) with the provenance of every rule
 * involved, plus caps, forbids, warnings and suggestions. Engines are built once per set of packs and reused,
 * so calling this once per mode costs one engine run each.
 */
export async function decide(packs: readonly LoadedPack[], facts: Facts): Promise<Decisions> {
  const checked = checkedFacts(facts)
  const engine = await engineFor(packs)
  const run = await engine.run(checked)
  const fired = [...run.fired].sort(byPrecedence)
  const events = fired.map((compiled) => ({ compiled, provenance: provenanceOf(compiled, checked) }))
  const said = collectEvents(events, checked)
  return {
    mode: checked.mode,
    settings: resolveSettings(said),
    caps: said.caps,
    forbids: said.forbids,
    warnings: said.warnings,
    suggestions: said.suggestions,
    packs: engine.packs.map((pack) => ({
      name: pack.meta.name,
      version: pack.meta.version,
      layer: pack.layer,
      applies: run.applies.get(pack) ?? false,
    })),
    fired: fired.map(({ pack, rule }) => `${pack.meta.name}/${rule.id}`),
    facts: checked,
  }
}

/** The facts, range-checked: an out-of-range fact is refused before any rule reads it. */
function checkedFacts(facts: Facts): Facts {
  const checked = Facts.safeParse(facts)
  if (checked.success) return checked.data
  const issue = checked.error.issues[0]
  throw new RigfitError(
    'validation',
    'E_FACTS',
    `the machine and workload give an out-of-range fact for the rules: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
    {
      // Profiles and flags are range-checked when read, so this points at a value that slipped through.
      suggestion:
        'Check the profile (--from) and the hardware flags for an impossible value, or profile the machine again with `rigfit profile --out FILE`.',
    },
  )
}

/** What the fired rules said, in precedence order: values set, caps, forbids, warnings and suggestions. */
interface RuleSayings {
  sets: Map<SettingName, Array<{ value: SettingValue; provenance: Provenance }>>
  caps: Decisions['caps']
  forbids: ForbidDecision[]
  warnings: AdviceDecision[]
  suggestions: AdviceDecision[]
}

/** Gathers what each fired rule said, in precedence order. */
function collectEvents(
  events: { compiled: CompiledRule; provenance: Provenance }[],
  facts: Facts,
): RuleSayings {
  const said: RuleSayings = { sets: new Map(), caps: {}, forbids: [], warnings: [], suggestions: [] }
  for (const { compiled, provenance } of events) {
    const event = compiled.rule.event
    switch (event.type) {
      case 'set': {
        const value = resolveValue(event.params.setting, event.params.value, facts)
        if (value === null) break
        const list = said.sets.get(event.params.setting) ?? []
        list.push({ value, provenance })
        said.sets.set(event.params.setting, list)
        break
      }
      case 'cap': {
        const max = resolveValue(event.params.setting, event.params.max, facts)
        if (typeof max !== 'number') break
        addCap(said.caps, event.params.setting, max, provenance)
        break
      }
      case 'forbid':
        said.forbids.push({ setting: event.params.setting, value: event.params.value, provenance })
        break
      case 'warn':
        addAdvice(said.warnings, event.params.id, event.params.message, null, provenance)
        break
      case 'suggest':
        addAdvice(
          said.suggestions,
          event.params.id,
          event.params.message,
          event.params.expectedGain ?? null,
          provenance,
        )
        break
    }
  }
  return said
}

/** Each setting a rule set or forbade, resolved to its winning value, in name order. */
function resolveSettings(said: RuleSayings): Decisions['settings'] {
  const settings: Decisions['settings'] = {}
  const decided = new Set<SettingName>([...said.sets.keys(), ...said.forbids.map((f) => f.setting)])
  for (const setting of [...decided].sort()) {
    const decision = resolveSetting(setting, said.sets.get(setting) ?? [], said.forbids, said.caps[setting])
    if (decision) settings[setting] = decision
  }
  return settings
}

function resolveSetting(
  setting: SettingName,
  candidates: Array<{ value: SettingValue; provenance: Provenance }>,
  forbids: ForbidDecision[],
  cap: CapDecision | undefined,
): SettingDecision | null {
  const forbidding = forbids.filter((forbid) => forbid.setting === setting)
  const overridden: OverriddenValue[] = []
  let winner: { value: SettingValue; provenance: Provenance; source: SettingDecision['source'] } | null = null
  for (const candidate of candidates) {
    const forbid = forbidding.find((f) => f.value === candidate.value)
    if (forbid) {
      overridden.push({
        ...candidate,
        why: 'forbidden',
        forbiddenBy: `${forbid.provenance.pack}/${forbid.provenance.rule}`,
      })
    } else if (winner) {
      overridden.push({ ...candidate, why: 'precedence', forbiddenBy: null })
    } else {
      winner = { ...candidate, source: 'set' }
    }
  }
  // A yes/no setting with one value forbidden and no other rule deciding it takes the other value.
  if (!winner && settingKind(setting) === 'boolean') {
    const values = new Set(forbidding.map((f) => f.value))
    const [forbid] = forbidding
    if (forbid && values.size === 1)
      winner = { value: !forbid.value, provenance: forbid.provenance, source: 'forbid' }
  }
  if (!winner) return null
  let value = winner.value
  let cappedFrom: number | null = null
  if (typeof value === 'number' && cap && value > cap.max) {
    cappedFrom = value
    value = cap.max
  }
  return { setting, value, source: winner.source, provenance: winner.provenance, overridden, cappedFrom }
}

function addCap(caps: Decisions['caps'], setting: SettingName, max: number, provenance: Provenance): void {
  const current = caps[setting]
  if (!current) {
    caps[setting] = { setting, max, provenance, others: [] }
  } else if (max < current.max) {
    caps[setting] = {
      setting,
      max,
      provenance,
      others: [...current.others, { max: current.max, provenance: current.provenance }],
    }
  } else {
    current.others.push({ max, provenance })
  }
}

/** One message per id: the rule first in precedence says it. */
function addAdvice(
  list: AdviceDecision[],
  id: string,
  message: string,
  expectedGain: string | null,
  provenance: Provenance,
): void {
  if (!list.some((advice) => advice.id === id)) list.push({ id, message, expectedGain, provenance })
}

/**
 * An event's value: a literal, or a fact's value for numeric settings (`{ "fact": "physicalCores" }`), rounded
 * down for whole-number settings and kept inside the setting's range. Null when the fact is unknown.
 */
function resolveValue(
  setting: SettingName,
  raw: SettingValue | { fact: FactName },
  facts: Facts,
): SettingValue | null {
  if (typeof raw !== 'object') return raw
  const value = facts[raw.fact]
  if (typeof value !== 'number' || settingKind(setting) !== 'number') return null
  return clampToSetting(setting, value)
}

function clampToSetting(setting: SettingName, value: number): number {
  const schema = SETTING_VALUES[setting] as unknown as {
    minValue: number | null
    maxValue: number | null
    isInt: boolean
  }
  let result = schema.isInt ? Math.floor(value) : value
  if (schema.minValue !== null && result < schema.minValue) result = schema.minValue
  if (schema.maxValue !== null && result > schema.maxValue) result = schema.maxValue
  return result
}

function provenanceOf(compiled: CompiledRule, facts: Facts): Provenance {
  const event = compiled.rule.event
  const reason = 'reason' in event.params ? event.params.reason : event.params.message
  return {
    rule: compiled.rule.id,
    pack: compiled.pack.meta.name,
    layer: compiled.pack.layer,
    priority: compiled.rule.priority,
    facts: Object.fromEntries(compiled.reads.map((name) => [name, facts[name]])),
    reason,
  }
}

const engineCache = new Map<string, Promise<RulesEngine>>()
const packIds = new WeakMap<LoadedPack, number>()
let nextPackId = 1
const ENGINE_CACHE_SIZE = 16

/** Loaded packs are frozen, so a pack object's identity stands for its content. */
function engineFor(packs: readonly LoadedPack[]): Promise<RulesEngine> {
  const key = packs
    .map((pack) => {
      let id = packIds.get(pack)
      if (id === undefined) {
        id = nextPackId++
        packIds.set(pack, id)
      }
      return id
    })
    .join(',')
  let engine = engineCache.get(key)
  if (!engine) {
    engine = RulesEngine.create(packs)
    engine.catch(() => engineCache.delete(key))
    engineCache.set(key, engine)
    if (engineCache.size > ENGINE_CACHE_SIZE) engineCache.delete(engineCache.keys().next().value as string)
  } else {
    engineCache.delete(key)
    engineCache.set(key, engine)
  }
  return engine
}
