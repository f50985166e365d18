import { describe, expect, it } from 'vitest'
import { parseTrainingLine } from '../../src/metrics/parse-training-line.js'

describe('parseTrainingLine', () => {
  it('reads JSON metric lines, folding aliases', () => {
    expect(parseTrainingLine('{"step": 10, "loss": 2.3, "tokens": 40960}')).toEqual({
      source: 'json',
      metrics: { step: 10, loss: 2.3, tokens: 40960 },
    })
    expect(
      parseTrainingLine(
        '{"global_step": 7, "train_loss": 1.5, "lr": 0.001, "max_steps": 100, "num_input_tokens_seen": 99}',
      ),
    ).toEqual({
      source: 'json',
      metrics: { step: 7, loss: 1.5, learningRate: 0.001, totalSteps: 100, tokens: 99 },
    })
  })

  it('reads Hugging Face Trainer dicts, also behind a log prefix', () => {
    expect(parseTrainingLine("{'loss': 2.31, 'learning_rate': 4e-05, 'epoch': 0.5}")).toEqual({
      source: 'hf',
      metrics: { loss: 2.31, learningRate: 4e-5, epoch: 0.5 },
    })
    expect(parseTrainingLine("[rank0]: INFO {'loss': 1.9, 'epoch': 1.0}")?.metrics).toEqual({
      loss: 1.9,
      epoch: 1,
    })
  })

  it("reads the Trainer's tqdm bar but not a labelled bar such as a dataset map", () => {
    expect(parseTrainingLine(' 45%|████▌     | 450/1000 [01:23<01:40,  5.43it/s]')).toEqual({
      source: 'tqdm',
      metrics: { step: 450, totalSteps: 1000 },
    })
    expect(parseTrainingLine('  0%|          | 0/200 [00:00<?, ?it/s]')?.metrics).toEqual({
      step: 0,
      totalSteps: 200,
    })
    expect(parseTrainingLine('Map: 100%|██████████| 1000/1000 [00:01<00:00, 900.12 examples/s]')).toBeNull()
  })

  it('ignores lines without figures and drops values that are not numbers or not finite', () => {
    expect(parseTrainingLine('{"event": "start", "pid": 12}')).toBeNull()
    expect(parseTrainingLine('Epoch 1 done')).toBeNull()
    expect(parseTrainingLine('{"step": "ten"}')).toBeNull()
    expect(parseTrainingLine("{'loss': nan, 'step': 3}")?.metrics).toEqual({ step: 3 })
    expect(parseTrainingLine('{"step": -4, "loss": 1}')?.metrics).toEqual({ loss: 1 })
  })
})
