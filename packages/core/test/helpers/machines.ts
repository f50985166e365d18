import { readdirSync, readFileSync } from 'node:fs'
import { isRigfitError } from '../../src/errors.js'
import { loadCorePack } from '../../src/node/core-pack.js'
import { generatePlan, type PlanOptions } from '../../src/plan/generate.js'
import { decide } from '../../src/rules/decide.js'
import { deriveFacts } from '../../src/rules/derive-facts.js'
import type { Mode } from '../../src/schemas/common.js'
import { HardwareProfile } from '../../src/schemas/hardware-profile.js'
import type { TrainingPlan } from '../../src/schemas/training-plan.js'
import type { Workload } from '../../src/schemas/workload.js'

const machinesDir = new URL('../fixtures/machines/', import.meta.url)

/** The recorded machine profiles the planner tests sweep: laptops, desktops, servers, a Mac, CPU-only VMs. */
export const MACHINES = readdirSync(machinesDir).map((file) => ({
  name: file.replace(/\.json$/, ''),
  profile: HardwareProfile.parse(JSON.parse(readFileSync(new URL(file, machinesDir), 'utf8'))),
}))

export function machine(name: string): HardwareProfile {
  const found = MACHINES.find((candidate) => candidate.name === name)
  if (!found) throw new Error(`no machine fixture ${name}`)
  return found.profile
}

const pack = loadCorePack()

/** The plan the core pack and the generator make, or null when nothing fits (a fit error). */
export async function planOrNull(
  profile: HardwareProfile,
  workload: Workload,
  mode: Mode,
  options: Partial<PlanOptions> = {},
): Promise<TrainingPlan | null> {
  const decisions = await decide([pack], deriveFacts(profile, workload, mode))
  try {
    return generatePlan({ profile, workload, mode, decisions, options: { createdAt: 'fixed', ...options } })
  } catch (error) {
    if (isRigfitError(error) && error.kind === 'fit') return null
    throw error
  }
}
