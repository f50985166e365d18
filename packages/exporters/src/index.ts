export { type Engine, engineOf, type OffloadTarget } from './engine.js'
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
export { parsePlan, readPlanFile, readProfileIoFacts } from './load-plan.js'
export {
  ADAPTER_CONFIG_FILE,
  baseModelId,
  bnbQuantizationConfig,
  peftAdapterConfig,
  QUANTIZATION_CONFIG_FILE,
} from './method.js'
export { FORMATS, getFormat } from './registry.js'
export { type FolderWrite, writeExportFolder } from './replace-folder.js'
export { FORMAT_STACK, STACK_SETTINGS_FILE, stackSentence, stackSettings } from './stack-settings.js'
export type { ClusterShape, Exporter, ExportFile, FormatContext } from './types.js'
export { writeExportFiles } from './write-files.js'
