import { describe, expect, it } from 'vitest'
import { validShardingOffload } from '../../src/plan/search.js'

describe('validShardingOffload', () => {
  it('allows only combinations a trainer can run', () => {
    expect(validShardingOffload('none', 'none', 1)).toBe(true)
    expect(validShardingOffload('none', 'optimizer', 1)).toBe(false)
    expect(validShardingOffload('zero2', 'optimizer', 1)).toBe(true)
    expect(validShardingOffload('zero2', 'none', 1)).toBe(false)
    expect(validShardingOffload('zero1', 'all', 4)).toBe(false)
    expect(validShardingOffload('zero3', 'all', 4)).toBe(true)
    expect(validShardingOffload('zero2', 'none', 4)).toBe(true)
  })
})
