export { findCatalogModel, listModels, MODEL_CATALOG } from './catalog.js'
export { closeMatches } from './close-matches.js'
export { SUPPORTED_MODEL_TYPES } from './family-traits.js'
export { MAX_CONFIG_INTEGER, modelSpecFromHfConfig } from './hf-config.js'
export { countParams, loraParamsPerLayer, type ModelParts, modelParts, type ParamCounts } from './params.js'
export { generateModelShape, type ShapeFamily, type ShapeOptions } from './shape.js'
export {
  assertSaneMemory,
  assertSaneParameterCount,
  MAX_MEMORY_BYTES,
  MAX_MODEL_PARAMETERS,
} from './size-bounds.js'
