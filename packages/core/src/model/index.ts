export { findCatalogModel, listModels, MODEL_CATALOG } from './catalog.js'
export { closeMatches } from './close-matches.js'
export { SUPPORTED_MODEL_TYPES } from './family-traits.js'
export { MAX_CONFIG_INTEGER, modelSpecFromHfConfig } from './hf-config.js'
export {
  DEFAULT_HUB_REVISION,
  type HubModelRef,
  hubCacheFolderName,
  isCommitHash,
  parseHubModelRef,
  repoOfHubCacheFolder,
} from './hub-ref.js'
export { ALL_LINEAR, resolveLoraTargets } from './lora-targets.js'
export { describeHubOrigin, describeWeights, modelOriginRows } from './origin.js'
export { countParams, loraParamsPerLayer, type ModelParts, modelParts, type ParamCounts } from './params.js'
export {
  type BlockLinear,
  MODULE_LAYOUTS,
  type ModuleLayout,
  moduleLayout,
  peftNames,
  pickedBy,
} from './peft-modules.js'
export {
  MAX_SAFETENSORS_HEADER_BYTES,
  parseSafetensorsHeader,
  parseSafetensorsIndex,
  SAFETENSORS_DTYPE_BITS,
  type SafetensorsHeader,
  type SafetensorsIndex,
  type SafetensorsTensor,
  safetensorsHeaderLength,
} from './safetensors.js'
export { generateModelShape, type ShapeFamily, type ShapeOptions } from './shape.js'
export {
  assertSaneMemory,
  assertSaneParameterCount,
  MAX_MEMORY_BYTES,
  MAX_MODEL_PARAMETERS,
} from './size-bounds.js'
export { nearestSupportedModelType } from './unpriceable.js'
export { WEIGHTS_AGREEMENT, weightsFromHeaders, weightsFromIndex } from './weights.js'
