import { LAYER_RANK } from '../schemas/rule-pack.js'
import type { CompiledRule } from './engine.js'

/**
 * The one order every decision follows: higher priority first, then the higher layer (user > vendor > core),
 * then the rule id, then the pack name (two packs may hold rules with one id). The first rule in this order wins.
 */
export function byPrecedence(a: CompiledRule, b: CompiledRule): number {
  return (
    b.rule.priority - a.rule.priority ||
    LAYER_RANK[b.pack.layer] - LAYER_RANK[a.pack.layer] ||
    compareText(a.rule.id, b.rule.id) ||
    compareText(a.pack.meta.name, b.pack.meta.name)
  )
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
