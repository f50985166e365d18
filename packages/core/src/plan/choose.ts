import type { Lever } from './ladder.js'
import { complexity, pickBest, type RankOptions } from './rank.js'
import type { Candidate } from './search.js'

/** A setup that fits, with where the search found it. */
export interface Found extends Candidate {
  /** The cheapest lever of the ladder whose rung holds it. */
  lever: Lever
  /** A rung that kept the rule packs' preferred values holds it. */
  preferred: boolean
}

/** One setup the planner weighed, as `explain` shows it: its levers, its speed and the time it needs. */
export interface Alternative {
  setup: string
  tokensPerSecond: number
  hours: number | null
  memoryBytes: number
  chosen: boolean
}

export interface Choice {
  best: Found | null
  /** The best setup that keeps every rule preference, when one fits. */
  preferredBest: Found | null
  /** The best setup of each distinct set of levers, fastest first. */
  alternatives: Alternative[]
}

/** Speeds within this share count as equal (as in rank.ts): a rule's preference decides between them. */
const SPEED_TIE = 0.02

/**
 * Chooses among every setup that fits, by predicted cost rather than by the order levers are reached for:
 * - a setup whose mechanisms a simpler setup of its shape does without is left out (needed), and one a simpler
 *   setup beats on speed (undominated);
 * - a setup over the mode's memory line (within its tolerance) is weighed only when it needs fewer mechanisms
 *   than the best setup under the line, so 0.2 % over the line does not pull in offload;
 * - a setup that departs from a rule pack's preference wins only when it trains a preferred method or model,
 *   or when it is predicted faster than the best preferred setup by more than the model's resolution:
 *   a rule's claim about speed is checked against the estimate, not taken as given.
 */
export function chooseSetup(found: Found[], rank: RankOptions): Choice {
  const underLine = found.filter((c) => !c.overLine)
  const strict = pickBest(underLine, rank)
  const spare = found.filter((c) => c.overLine && (strict === null || complexity(c) < complexity(strict)))
  const weighed = [...underLine, ...spare]
  const useful = needed(weighed)
  const pool = undominated(useful)
  const all = pickBest(pool, rank) as Found | null
  // The preferred setups among themselves: a faster setup that departs from a rule must not hide them.
  const preferredBest = pickBest(undominated(useful.filter((c) => c.preferred)), rank) as Found | null
  const best = all && preferredBest && !departs(all, preferredBest) ? preferredBest : all
  return { best, preferredBest, alternatives: alternatives(weighed, rank, best) }
}

/**
 * Leaves out every setup whose memory mechanisms buy nothing: a simpler setup of the same shape (model, method,
 * sequence, micro-batch, accumulation) fits too. Offload, 8-bit states and recomputation trade speed for memory;
 * where the memory is not needed, a predicted gain from them is the estimate's noise, not a reason.
 */
function needed(pool: Found[]): Found[] {
  const shape = (c: Found) =>
    `${c.model.id} ${c.result.params.total} ${c.method} ${c.seq} ${c.microBatch} ${c.gradAccum}`
  // Sharding is not counted: across GPUs it is also a way to scale, and its cost is the estimate's to weigh.
  const memoryLevers = (c: Found) =>
    Number(c.gradCheckpointing) + Number(c.optimizer === 'adamw-8bit') + 2 * Number(c.offload !== 'none')
  const least = new Map<string, number>()
  for (const c of pool) least.set(shape(c), Math.min(least.get(shape(c)) ?? Infinity, memoryLevers(c)))
  return pool.filter((c) => memoryLevers(c) <= (least.get(shape(c)) ?? 0))
}

/**
 * Leaves out every setup that a simpler one beats on predicted speed: a mechanism (checkpointing, sharding,
 * offload, 8-bit states) is worth its place only when no setup without it is faster, at whatever sequence of
 * the mode's range. A longer sequence is preferred (rank.ts), but never bought with a slower mechanism.
 */
function undominated(pool: Found[]): Found[] {
  // Within one model and method: a smaller model or an adapter is faster for other reasons.
  const group = (c: Found) => `${c.model.id} ${c.result.params.total} ${c.method}`
  const fastest = new Map<string, number>()
  for (const c of pool) {
    const key = `${group(c)} ${complexity(c)}`
    fastest.set(key, Math.max(fastest.get(key) ?? 0, c.tokensPerSecond))
  }
  const beaten = (c: Found) => {
    for (let level = 0; level < complexity(c); level += 1) {
      const speed = fastest.get(`${group(c)} ${level}`) ?? 0
      if (speed > c.tokensPerSecond * (1 + SPEED_TIE)) return true
    }
    return false
  }
  return pool.filter((c) => !beaten(c))
}

/** Whether the best of all setups should win over the best preferred one. */
function departs(all: Found, preferred: Found): boolean {
  if (all.preferred) return true
  if (all.methodRank !== preferred.methodRank || all.model.id !== preferred.model.id) return true
  return all.tokensPerSecond > preferred.tokensPerSecond * (1 + SPEED_TIE)
}

/** The best setup of each set of levers (checkpointing, sharding, offload, optimizer, sequence). */
function alternatives(pool: Found[], rank: RankOptions, best: Found | null): Alternative[] {
  const groups = new Map<string, Found[]>()
  const bestMethod = best?.method
  for (const c of pool) {
    if (c.method !== bestMethod || c.model.id !== best?.model.id) continue
    const key = describeSetup(c)
    groups.set(key, [...(groups.get(key) ?? []), c])
  }
  const out: Alternative[] = []
  for (const [setup, members] of groups) {
    const top = members.includes(best as Found) ? (best as Found) : pickBest(members, rank)
    if (!top) continue
    out.push({
      setup,
      tokensPerSecond: Math.round(top.tokensPerSecond),
      hours: Number.isFinite(top.hours) ? Math.round(top.hours * 100) / 100 : null,
      memoryBytes: top.deviceBytes,
      chosen: top === best,
    })
  }
  return out.sort((a, b) => b.tokensPerSecond - a.tokensPerSecond).slice(0, 8)
}

/** A setup's levers in words: "seq 2048, checkpointing, fsdp, offload optimizer". */
export function describeSetup(
  c: Pick<Candidate, 'seq' | 'gradCheckpointing' | 'sharding' | 'offload' | 'optimizer' | 'microBatch'>,
): string {
  const parts = [`seq ${c.seq}`, c.gradCheckpointing ? 'checkpointing' : 'no checkpointing']
  if (c.sharding !== 'none') parts.push(c.sharding)
  if (c.offload !== 'none') parts.push(`offload ${c.offload}`)
  if (c.optimizer === 'adamw-8bit') parts.push('8-bit optimizer')
  return parts.join(', ')
}
