import type { LoadedPack } from '../packs/loaded-pack.js'
import { generatePlan, type PlanOptions } from '../plan/generate.js'
import { decide } from '../rules/decide.js'
import { deriveFacts } from '../rules/derive-facts.js'
import type { Mode } from '../schemas/common.js'
import type { HardwareProfile } from '../schemas/hardware-profile.js'
import type { Advice, TrainingPlan } from '../schemas/training-plan.js'
import type { Workload } from '../schemas/workload.js'

export interface SearchPlanOptions extends PlanOptions {
  /** Hourly price of one node, for each plan's `cost`; null: no cost. */
  pricePerHour?: number | null
  /** Warnings every plan carries beyond the profile's own: a cluster's differences and missing nodes. */
  notices?: Advice[]
}

export interface PlanModeRequest {
  packs: readonly LoadedPack[]
  profile: HardwareProfile
  workload: Workload
  mode: Mode
  options: SearchPlanOptions
  /** What the plan's maker must know beyond `options.notices`: skipped packs, assumed hardware. */
  notices: Advice[]
}

/**
 * One mode planned as a command prints it: the packs decide, the generator plans, and the plan carries the
 * caller's notices first and its cost when a price is known. Throws the generator's fit error when nothing fits.
 */
export async function planMode(request: PlanModeRequest): Promise<TrainingPlan> {
  const { packs, profile, workload, mode, options } = request
  const decisions = await decide(packs, deriveFacts(profile, workload, mode))
  const plan = generatePlan({ profile, workload, mode, decisions, options })
  plan.warnings.unshift(...(options.notices ?? []), ...request.notices)
  plan.cost = planCost(plan, options.pricePerHour ?? null)
  return plan
}

/** The plan's `cost`: the node's hourly price times the nodes and the hours, or null without a price. */
export function planCost(plan: TrainingPlan, price: number | null): TrainingPlan['cost'] {
  if (price === null) return null
  const nodes = plan.settings.nodes
  return { pricePerHour: price, currency: 'USD', nodes, total: price * nodes * plan.time.totalHours }
}
