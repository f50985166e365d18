import { describe, it } from 'vitest'
import { CORE_PACK_ROOT } from '../../src/node/core-pack.js'
import { testPackDirectory } from '../../src/node/pack-test-suite.js'

testPackDirectory(CORE_PACK_ROOT, { describe, it, layer: 'core' })
