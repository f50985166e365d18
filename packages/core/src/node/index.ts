/**
 * @rigfit/core/node: what reads the disk. Core's main entry parses text and objects only; this entry reads pack
 * folders, catalogs, test cases and model configs for the CLI, plugins and tests running on Node.
 */
export { CORE_PACK_ROOT, loadCorePack } from './core-pack.js'
export {
  displayPath,
  listJsonFiles,
  MAX_INPUT_DOCUMENT_BYTES,
  type ReadOptions,
  readLimited,
  readTextFile,
  type TextRead,
} from './files.js'
export { type CasesResult, loadPackCases, type ResolvedCase } from './load-cases.js'
export {
  loadPackPath,
  loadPacksIn,
  loadValidationTarget,
  type PackLocation,
  type PacksResult,
  type ValidationTarget,
} from './load-pack.js'
export { readFolderWeights, readSafetensorsHeader } from './model-weights.js'
export {
  BUNDLED_PLUGINS,
  type BundledPlugins,
  bundledPluginRoots,
  type CatalogsLoad,
  loadBundledPlugins,
  loadPluginCatalogs,
  loadPluginPacks,
  type PluginRoot,
  sortPluginRoots,
} from './plugin-bundle.js'
export {
  buildPrecheckedCatalogs,
  loadCatalogFile,
  PRECHECKED_CATALOGS_FORMAT,
  type PrecheckedCatalogs,
  readPrecheckedCatalogs,
} from './prechecked-catalogs.js'

export {
  buildPrecheckedBundle,
  loadPackPrechecked,
  PRECHECKED_FORMAT,
  type PrecheckedBundle,
  type PrecheckedRead,
  packDigest,
  readPrecheckedBundle,
} from './prechecked-packs.js'
export { DEFAULT_INPUT_TIMEOUT_MS, readInputText } from './read-input.js'
export { readModelFolder, resolveModel } from './resolve-model.js'
export {
  assertReplaceable,
  existingKind,
  processAlive,
  removeStaleTemporaries,
  temporaryPathFor,
  writeFileSafely,
} from './safe-write.js'
export { uniquePacks } from './unique-packs.js'
