import { describe, expect, it } from 'vitest'
import { autoHeuristic } from '../../src/plan/auto-heuristic.js'

const GiB = 2 ** 30

describe('autoHeuristic (the defconfig AUTO batch heuristic)', () => {
  it('reproduces the worked example: ResNet-18 on an H100 with 70 GB free -> batch 64, accumulation 8', () => {
    const result = autoHeuristic({
      model: 'resnet18',
      freeBytes: 70 * GiB,
      gpus: 1,
      compile: true,
      targetEffectiveBatch: 512,
    })
    expect(result).toMatchObject({ microBatch: 64, gradAccum: 8, effectiveBatch: 512, tierGiB: 32, scale: 2 })
  })

  it('halves the tier batch without torch.compile and scales by the model factor', () => {
    const off = autoHeuristic({
      model: 'gpt2',
      freeBytes: 24 * GiB,
      gpus: 1,
      compile: false,
      targetEffectiveBatch: 1024,
    })
    expect(off.microBatch).toBe(8)
    const lenet = autoHeuristic({
      model: 'lenet5',
      freeBytes: 24 * GiB,
      gpus: 1,
      compile: true,
      targetEffectiveBatch: 512,
    })
    expect(lenet.microBatch).toBe(64)
  })

  it('uses the CPU base batch without a GPU and divides accumulation among GPUs', () => {
    expect(
      autoHeuristic({
        model: 'resnet50',
        freeBytes: null,
        gpus: 0,
        compile: false,
        targetEffectiveBatch: 256,
      }),
    ).toMatchObject({ microBatch: 24, tierGiB: null })
    const four = autoHeuristic({
      model: 'resnet18',
      freeBytes: 80 * GiB,
      gpus: 4,
      compile: true,
      targetEffectiveBatch: 512,
    })
    expect(four.microBatch * four.gradAccum * 4).toBe(512)
  })
})
