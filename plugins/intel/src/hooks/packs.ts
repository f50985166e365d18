import type { PackHook } from '@rigfit/core/plugin'
import { packRoot } from '../index.js'

/** oclif hook `rigfit:packs`: tells the CLI where this plugin's rule pack lives; the CLI loads and validates it. */
const hook: PackHook = async () => ({ name: 'intel', root: packRoot })
export default hook
