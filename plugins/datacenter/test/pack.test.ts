import { testPackDirectory } from '@rigfit/core/rule-tester'
import { describe, it } from 'vitest'
import hook from '../src/hooks/packs.js'

testPackDirectory(new URL('..', import.meta.url), { describe, it, hook })
