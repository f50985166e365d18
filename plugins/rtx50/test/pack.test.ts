import { testPackDirectory } from '@rigfit/core/pack-test-suite'
import { describe, it } from 'vitest'
import hook from '../src/hooks/packs.js'

testPackDirectory(new URL('..', import.meta.url), { describe, it, hook })
