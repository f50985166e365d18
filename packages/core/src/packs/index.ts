export { CORE_PACK_ROOT, loadCorePack } from './core-pack.js'
export { closest as closestName } from './describe-issues.js'
export { PACK_LIMITS } from './limits.js'
export { type CasesResult, loadPackCases, type ResolvedCase } from './load-cases.js'
export {
  displayPath,
  listJsonFiles,
  loadPackPath,
  loadPacksIn,
  loadValidationTarget,
  type PackLocation,
  type PacksResult,
  type ValidationTarget,
} from './load-pack.js'
export type { LoadedPack } from './loaded-pack.js'
export {
  type PackFile,
  type PackParseResult,
  type PackSource,
  parsePackDirectory,
  parseRuleFile,
  parseSingleFilePack,
} from './parse-pack.js'
export { FORBIDDEN_KEYS, jsonPath, parseJsonSafely } from './safe-json.js'
export { uniquePacks } from './unique-packs.js'
