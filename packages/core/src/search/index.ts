export { type Cluster, clusterFromProfile, clusterOfNodes } from './cluster-plan.js'
export {
  explainedFitError,
  type FitAlternative,
  type FitSearch,
  fitAlternatives,
} from './fit-alternatives.js'
export { type PlanModeRequest, planCost, planMode, type SearchPlanOptions } from './plan-mode.js'
export {
  type HardwareSearch,
  type Recommendation,
  type RecommendationResult,
  recommendBudgetHours,
  recommendHardware,
} from './recommend.js'
export type { WhatIfHardware } from './what-if-hardware.js'
