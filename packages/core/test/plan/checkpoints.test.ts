import { describe, expect, it } from 'vitest'
import { planCheckpoints } from '../../src/plan/checkpoints.js'

describe('planCheckpoints', () => {
  it('saves every 30 minutes on long runs, more often on short ones, and checks the disk', () => {
    expect(
      planCheckpoints({
        totalHours: 10,
        checkpointBytes: 1e9,
        kept: 3,
        datasetCacheBytes: 5e9,
        diskFreeBytes: 1e10,
      }),
    ).toMatchObject({
      intervalMinutes: 30,
      diskNeededBytes: 8e9,
      fitsOnDisk: true,
    })
    const short = planCheckpoints({
      totalHours: 1,
      checkpointBytes: 1e9,
      kept: 5,
      datasetCacheBytes: 0,
      diskFreeBytes: 2e9,
    })
    expect(short.intervalMinutes).toBe(6)
    expect(short.fitsOnDisk).toBe(false)
  })
})
