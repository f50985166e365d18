import { describe, expect, it } from 'vitest'
import { rigfit, rigfitJson } from './helpers/run-cli.js'

// The dataset as users know it — examples of so many tokens, or a token count — and how many passes over it,
// planned as the token budget. A generous time budget leaves the dataset as the bound, so the budget is exactly
// the whole optimizer steps that fit in it.
const base = [
  '--gpu',
  'RTX 4090',
  '--model',
  'gpt2',
  '--method',
  'full',
  '--seq',
  '512',
  '--time-budget',
  '2000h',
]

type Plan = { tokens: { budget: number; binding: string }; settings: { effectiveBatch: number; seq: number } }

function expectDatasetBound(plan: Plan, tokens: number) {
  const perStep = plan.settings.effectiveBatch * plan.settings.seq
  expect(plan.tokens.binding).toBe('dataset')
  expect(plan.tokens.budget).toBeLessThanOrEqual(tokens)
  expect(plan.tokens.budget).toBeGreaterThan(tokens - perStep)
  expect(plan.tokens.budget % perStep).toBe(0)
}

describe('dataset inputs: --examples x --tokens-per-example, --dataset-tokens, --epochs', () => {
  it.each([
    ['20k', '512', null, 20_000 * 512],
    ['50k', '1k', null, 50_000 * 1000],
    ['3,000', '256', '2', 3000 * 256 * 2],
    ['10k', '700', '0.5', 10_000 * 700 * 0.5],
  ])(
    '%s examples of %s tokens, epochs %s: the budget is that many tokens in whole steps',
    (examples, per, epochs, tokens) => {
      const args = [
        ...base,
        '--examples',
        examples,
        '--tokens-per-example',
        per,
        ...(epochs ? ['--epochs', epochs] : []),
      ]
      expectDatasetBound(rigfitJson(['plan', ...args]), tokens)
    },
  )

  it('--dataset-tokens plans the same budget as the examples that make it up', () => {
    const counted = rigfitJson(['plan', ...base, '--dataset-tokens', '5.12M'])
    const examples = rigfitJson(['plan', ...base, '--examples', '10k', '--tokens-per-example', '512'])
    expect(counted.tokens).toEqual(examples.tokens)
    expectDatasetBound(counted, 5_120_000)
  })

  it('the exported trainer arguments train those steps', () => {
    const exported = rigfitJson([
      'export',
      '--mode',
      'balanced',
      '--format',
      'hf',
      ...base,
      '--examples',
      '20k',
      '--tokens-per-example',
      '512',
    ])
    const args = JSON.parse(
      exported.files.find((f: { path: string }) => f.path === 'training_args.json').content,
    )
    const plan = rigfitJson(['plan', ...base, '--examples', '20k', '--tokens-per-example', '512'])
    expect(args.max_steps * args.per_device_train_batch_size * args.gradient_accumulation_steps * 512).toBe(
      plan.tokens.budget,
    )
  })

  it.each([
    [['--examples', '50k'], /--tokens-per-example/],
    [['--dataset-tokens', '5M', '--dataset-size', '1GB'], /cannot also be provided|--dataset-size/],
    [['--dataset-tokens', 'lots'], /--dataset-tokens "lots" is not a count/],
    [['--epochs', '0'], /--epochs "0"/],
  ])('bad input %j is refused with the flag named', (args, message) => {
    const run = rigfit(['plan', ...base, ...args])
    expect(run.status).not.toBe(0)
    expect(run.stderr).toMatch(message)
  })
})
