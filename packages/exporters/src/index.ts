/**
 * Earlier names of core's batch helpers and size parser, kept for existing importers: the one implementation
 * lives in @rigfit/core.
 */
export {
  effectiveBatchOf as effectiveBatch,
  parseSizeBytes as parseByteSize,
  processesPerNode,
  worldSize,
} from '@rigfit/core'
export { EXPORTERS_SOURCE } from './advice.js'
export { type CacheDecision, sizeCache } from './cache-sizing.js'
export { assertPlanConsistent, checkPlan, type PlanIssue } from './check-plan.js'
export { type Engine, engineOf, type OffloadTarget } from './engine.js'
export { planEstimateDevice } from './estimate-device.js'
export { estimateInputAt, type PlanPoint, planPoint } from './estimate-input.js'
export {
  EXPORT_MANIFEST_FILE,
  manifestEntry,
  manifestFile,
  readExportManifest,
  reexport,
  requireExportManifest,
  sha256,
} from './export-manifest.js'
export { type ExportOptions, type ExportResult, exportPlan, META_FILE } from './export-plan.js'
export { lockExportFolder, recoverExportFolder } from './folder-lock.js'
export { FORMAT_NAMES, type FormatName, isFormatName } from './format-names.js'
export { buildDeepSpeedConfig, zeroStage } from './formats/deepspeed-config.js'
export { buildModelArguments, buildModelConfig, buildTrainingArguments } from './formats/hf.js'
export { PLAN_FILE } from './formats/rigfit.js'
export { type IoFacts, ioFactsFromProfile, NO_IO_FACTS } from './io-facts.js'
export { parsePlan, readPlanFile, readProfileIoFacts } from './load-plan.js'
export { deriveMetaPlans, type MetaPlans, type PhaseSummary } from './meta-phases.js'
export {
  ADAPTER_CONFIG_FILE,
  baseModelId,
  bnbQuantizationConfig,
  peftAdapterConfig,
  QUANTIZATION_CONFIG_FILE,
} from './method.js'
export { planForNodes } from './nodes.js'
export { interNodeEfficiency, type Reestimate, reestimator } from './reestimate.js'
export { FORMATS, getFormat } from './registry.js'
export { type FolderWrite, writeExportFolder } from './replace-folder.js'
export { FORMAT_STACK, STACK_SETTINGS_FILE, stackSentence, stackSettings } from './stack-settings.js'
export { decideStreaming, type StreamingDecision } from './streaming.js'
export type { ClusterShape, Exporter, ExportFile, FormatContext } from './types.js'
export { writeExportFiles } from './write-files.js'
