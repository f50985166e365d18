export { type ActivationContext, blockActivationBytes, blockBackwardWorkspace } from './activations.js'
export { freedBlockServes, type Reservation, reservation, type StepMemory } from './allocator.js'
export {
  BAND_COVERAGE,
  bandOf,
  calibrateBands,
  type HeldOutRatio,
  MIN_BAND_ROWS,
} from './band-calibration.js'
export { communicationBytes } from './communication.js'
export { FIT_BANDS, type FitBand, fitVerdict, runKind } from './confidence.js'
export * as ESTIMATE_CONSTANTS from './constants.js'
export { cudaContextBytes, deviceFromCatalogEntry, devicePeakTflops } from './device.js'
export { type EstimateTuning, estimate, SHIPPED_TUNING } from './estimate.js'
export { type FlopsOptions, flopsPerToken, matmulParamsPerToken } from './flops.js'
export {
  MEMORY_PARTS,
  MEMORY_TERMS,
  type MemoryPart,
  memoryPartLabel,
} from './memory-parts.js'
export { adafactorStateElements, optimizerStateBytes } from './optimizer.js'
export { type BandBasis, bandPath, PARENT_KIND } from './run-kinds.js'
export { type InterconnectKind, scalingEfficiency } from './scaling.js'
export {
  evaluateValidationRow,
  isMemoryMetric,
  isOutcomeMetric,
  measuredValue,
  parseValidationRow,
  type ValidationOutcome,
  validationInput,
} from './validation.js'
export {
  bandsFromOutcomes,
  fitTuning,
  type HeldOutFold,
  leaveOneSourceOut,
  PRIOR_TUNING,
  TUNING_GRID,
} from './validation-fit.js'
export { renderValidationReport } from './validation-report.js'
export {
  type MetricSummary,
  type OutcomeSummary,
  type SummaryGroup,
  summarizeOutcomes,
  summarizeValidation,
  summaryOf,
} from './validation-summary.js'
