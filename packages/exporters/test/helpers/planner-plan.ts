import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import {
  decide,
  deriveFacts,
  generatePlan,
  HardwareProfile,
  type Mode,
  type TrainingPlan,
  WORKLOAD_SCHEMA_VERSION,
  type Workload,
} from '@rigfit/core'

const require = createRequire(import.meta.url)

/** A plan written by core's planner for one of core's recorded machines, pretraining from scratch. */
export async function plannerPlan(machine: string, mode: Mode): Promise<TrainingPlan> {
  const file = require.resolve(`@rigfit/core/fixtures/machines/${machine}.json`)
  const profile = HardwareProfile.parse(JSON.parse(readFileSync(file, 'utf8')))
  // Pretraining from scratch on one node, nothing else pinned: the planner picks model, sequence and batch.
  const unpinned = {
    model: null,
    datasetBytes: null,
    timeBudgetHours: null,
    targetEffectiveBatch: null,
    seq: null,
  }
  const base = { schemaVersion: WORKLOAD_SCHEMA_VERSION, kind: 'pretrain', method: 'auto', nodes: 1 } as const
  const workload: Workload = { ...base, ...unpinned, frozenModels: [] }
  const decisions = await decide([], deriveFacts(profile, workload, mode))
  return generatePlan({ profile, workload, mode, decisions, options: { createdAt: 'fixed' } })
}
