import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { parseLightningBar, parseStepLossLine } from '../../src/metrics/parse-text-progress.js'
import { parseTrainingLine } from '../../src/metrics/parse-training-line.js'
import { TrainingProgress } from '../../src/metrics/training-progress.js'

const logsDir = new URL('../fixtures/logs/', import.meta.url)

/** Feeds a log through the parser and the progress, one line (or \r redraw) per second; answers the result. */
function replay(name: string, planSteps: number | null = 1_000_000) {
  const progress = new TrainingProgress({
    effectiveBatch: null,
    seq: null,
    totalStepsOverride: null,
    totalStepsFromPlan: planSteps,
  })
  const sources = new Set<string>()
  const text = readFileSync(fileURLToPath(new URL(name, logsDir)), 'utf8')
  text.split(/\r\n|\r|\n/).forEach((line, second) => {
    const parsed = parseTrainingLine(line)
    if (parsed === null) return
    sources.add(parsed.source)
    progress.update(parsed.metrics, parsed.source === 'tqdm', second)
  })
  return { snapshot: progress.snapshot(), sources: [...sources].sort() }
}

describe('common training log formats (samples in test/fixtures/logs)', () => {
  it('Hugging Face Trainer: dict lines for loss and rate, its bar for step and total; dataset bars ignored', () => {
    const { snapshot, sources } = replay('hf-trainer.log')
    expect(sources).toEqual(['hf', 'tqdm'])
    expect(snapshot).toMatchObject({
      step: 30,
      totalSteps: 125,
      loss: 3.1876,
      learningRate: 3.8e-5,
      epoch: 0.24,
    })
    expect(snapshot.etaSeconds).not.toBeNull()
  })

  it('Lightning: batches across epochs, the loss from the bar, validation bars ignored', () => {
    const { snapshot, sources } = replay('lightning.log', null)
    expect(sources).toEqual(['lightning'])
    expect(snapshot).toMatchObject({ step: 50, loss: 3.19, epoch: 1.25, totalSteps: null })
  })

  it('a plain tqdm loop', () => {
    const { snapshot, sources } = replay('tqdm-loop.log')
    expect(sources).toEqual(['tqdm'])
    expect(snapshot).toMatchObject({ step: 37, totalSteps: 100 })
  })

  it('`step N … loss X` lines of hand-written loops (nanoGPT, modded-nanogpt, custom)', () => {
    const { snapshot, sources } = replay('step-loss.log')
    expect(sources).toEqual(['text'])
    expect(snapshot).toMatchObject({ step: 30, totalSteps: 200, loss: 2.7712, learningRate: 6e-4 })
  })

  it("takes the ETA from the trainer's own total steps over the plan's", () => {
    const progress = new TrainingProgress({
      effectiveBatch: null,
      seq: null,
      totalStepsOverride: null,
      totalStepsFromPlan: 1_000_000,
    })
    for (let step = 1; step <= 10; step += 1)
      progress.update({ step, totalSteps: 30, loss: 2 }, false, step * 2)
    // Two seconds a step, twenty steps left.
    expect(progress.snapshot()).toMatchObject({ totalSteps: 30, stepSeconds: 2, etaSeconds: 40 })
  })

  it('reads each text form exactly', () => {
    expect(parseStepLossLine('iter 10: loss 3.2453, time 101.31ms, mfu 3.71%')).toEqual({
      step: 10,
      loss: 3.2453,
    })
    expect(parseStepLossLine('Step 20/200 | loss: 2.9876 | lr: 6.0e-04')).toEqual({
      step: 20,
      totalSteps: 200,
      loss: 2.9876,
      learningRate: 6e-4,
    })
    expect(parseStepLossLine('step 5 loss nan')).toBeNull()
    expect(parseStepLossLine('Step 3 of the installation finished')).toBeNull()
    expect(parseStepLossLine('loss 2.0 at step 3')).toBeNull()
    expect(
      parseLightningBar('Epoch 2:  10%|█         | 4/40 [00:01<00:09,  3.9it/s, loss=1.25, v_num=3]'),
    ).toEqual({
      step: 84,
      epoch: 2.1,
      loss: 1.25,
    })
    expect(
      parseLightningBar('Validation DataLoader 0: 100%|██████████| 5/5 [00:00<00:00, 12.10it/s]'),
    ).toBeNull()
  })

  it('answers long hostile lines without a match (every pattern is linear in the line)', () => {
    for (const line of [
      `Epoch 1: 5%|${' '.repeat(100_000)}`,
      `${'step '.repeat(20_000)}loss`,
      `step 1 ${'loss '.repeat(20_000)}`,
    ])
      expect(parseTrainingLine(line)).toBeNull()
  })
})
