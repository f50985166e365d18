import { describe, expect, it } from 'vitest'
import { findCloudPreset } from '../../src/plan/cloud-presets.js'

describe('cloud presets', () => {
  it('finds presets by id, with or without the Azure Standard_ prefix', () => {
    expect(findCloudPreset('p4d.24xlarge')?.gpus).toBe(8)
    expect(findCloudPreset('Standard_NC6s_v3')?.gpu).toMatch(/V100/)
    expect(findCloudPreset('nope')).toBeUndefined()
  })
})
