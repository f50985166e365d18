import { describe, it } from 'vitest'
import { testPackDirectory } from '../rules/pack-test-suite.js'
import { CORE_PACK_ROOT } from './core-pack.js'

testPackDirectory(CORE_PACK_ROOT, { describe, it, layer: 'core' })
