import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { rigfit, rigfitJson } from './helpers/run-cli.js'

const TINY_LLAMA = fileURLToPath(new URL('../../../examples/pytorch/tiny-llama.json', import.meta.url))
const RTX4090 = ['--gpu', 'RTX 4090']

/** DeepSeek LLM's scaling law (arXiv:2401.02954, eq. 1 and 2), written out here apart from the planner's code. */
function deepseek(model: { layers: number; hidden: number }, seq: number, tokens: number) {
  const flopsPerToken = 72 * model.layers * model.hidden ** 2 + 12 * model.layers * model.hidden * seq
  const compute = flopsPerToken * tokens
  return { batchTokens: 0.292 * compute ** 0.3271, learningRate: 0.3118 * compute ** -0.125 }
}

describe('hyperparameters by method and origin, from the command line', () => {
  it('a small fine-tune keeps at least 8 sequences per step, and says why it cannot make 300 steps', () => {
    const args = ['plan', '--mode', 'extreme', ...RTX4090, '--model', 'smollm-135m', '--examples', '2k']
    const plan = rigfitJson([...args, '--tokens-per-example', '256', '--json'])
    // It was 6 sequences of 2048 tokens and 41 steps: the 256-token examples packed into a handful of steps.
    expect(plan.settings.effectiveBatch).toBeGreaterThanOrEqual(8)
    expect(plan.settings.seq).toBe(256)
    expect(plan.time.steps).toBe(Math.floor(2000 / plan.settings.effectiveBatch))
    const few = plan.warnings.find((w: { id: string }) => w.id === 'finetune-few-steps')
    expect(few?.message).toContain(`${plan.time.steps} optimizer steps, fewer than the 300`)
    expect(few?.message).toContain('--epochs 2')
    // The pass it suggests gives the steps, and the warning goes.
    const twice = rigfitJson([...args, '--tokens-per-example', '256', '--epochs', '2', '--json'])
    expect(twice.settings.effectiveBatch).toBeGreaterThanOrEqual(8)
    expect(twice.time.steps).toBeGreaterThanOrEqual(300)
    expect(twice.warnings.map((w: { id: string }) => w.id)).not.toContain('finetune-few-steps')
  })

  it('QLoRA exports carry QLoRA practice, not pretraining AdamW, and no torch.compile over bitsandbytes 4-bit', () => {
    const r = rigfit([
      'export',
      '--mode',
      'balanced',
      '--format',
      'hf',
      ...RTX4090,
      '--model',
      'llama-3.1-8b',
      '--method',
      'qlora',
      '--examples',
      '50k',
      '--tokens-per-example',
      '1k',
      '--json',
    ])
    expect(r.status, r.stderr).toBe(0)
    const files = JSON.parse(r.stdout).files as { path: string; content: string }[]
    const args = JSON.parse(files.find((f) => f.path === 'training_args.json')?.content ?? '{}')
    expect(args).toMatchObject({
      learning_rate: 2e-4,
      adam_beta1: 0.9,
      adam_beta2: 0.999,
      weight_decay: 0,
      max_grad_norm: 0.3,
      torch_compile: false,
    })
    expect(args.warmup_steps).toBe(Math.round(args.max_steps * 0.03))
    const why = rigfit(['explain', 'compile', ...RTX4090, '--model', 'llama-3.1-8b', '--method', 'qlora'])
    expect(why.stdout).toMatch(/bitsandbytes 0\.46\.0 with torch 2\.8\.0/)
  })

  it('LoRA plans train adapters with no weight decay and beta2 0.999, in the plan itself', () => {
    const plan = rigfitJson(['plan', ...RTX4090, '--model', 'llama-3.2-1b', '--method', 'lora', '--json'])
    expect(plan.settings.optimization).toMatchObject({
      beta1: 0.9,
      beta2: 0.999,
      weightDecay: 0,
      gradClip: 0.3,
    })
    expect(plan.settings.learningRate).toBe(2e-4)
  })

  it('a model given only as a config trains from scratch, unless --method says to fine-tune it', () => {
    const plan = rigfitJson(['plan', ...RTX4090, '--model', TINY_LLAMA, '--json'])
    expect(plan.workload.kind).toBe('pretrain')
    expect(plan.settings.learningRate).toBeGreaterThan(1e-3) // was the fine-tune's 5e-5
    expect(plan.settings.optimization).toMatchObject({ beta2: 0.95, weightDecay: 0.1 })
    const tuned = rigfitJson(['plan', ...RTX4090, '--model', TINY_LLAMA, '--method', 'full', '--json'])
    expect(tuned.workload.kind).toBe('finetune')
    expect(tuned.settings.learningRate).toBe(5e-5)

    // A folder without weights is the same; a folder with weights beside its config is a model to fine-tune.
    const bare = mkdtempSync(join(tmpdir(), 'rigfit-config-only-'))
    copyFileSync(TINY_LLAMA, join(bare, 'config.json'))
    expect(rigfitJson(['plan', ...RTX4090, '--model', bare, '--json']).workload.kind).toBe('pretrain')
    const trained = mkdtempSync(join(tmpdir(), 'rigfit-trained-'))
    copyFileSync(TINY_LLAMA, join(trained, 'config.json'))
    writeFileSync(join(trained, 'pytorch_model.bin'), 'weights')
    expect(rigfitJson(['plan', ...RTX4090, '--model', trained, '--json']).workload.kind).toBe('finetune')
    const file = join(trained, 'config.json')
    expect(JSON.parse(readFileSync(file, 'utf8')).hidden_size).toBeGreaterThan(0)
    expect(rigfitJson(['plan', ...RTX4090, '--model', file, '--json']).workload.kind).toBe('finetune')
  })

  it.each(['1B', '3B', '7B'])(
    '--params %s generates a shape people pick, with grouped-query attention',
    (size) => {
      const { model } = rigfitJson(['plan', '--gpu', 'H100', '--gpus', '8', '--params', size, '--json'])
      // It was 29 heads of 64 and hidden 1856 for 1B.
      expect([64, 128]).toContain(model.headDim)
      expect(model.hidden % 128).toBe(0)
      expect(model.heads * model.headDim).toBe(model.hidden)
      let odd = model.heads
      while (odd % 2 === 0) odd /= 2
      expect([1, 3, 5]).toContain(odd)
      expect(model.kvHeads).toBeLessThan(model.heads)
      expect(model.heads % model.kvHeads).toBe(0)
    },
  )

  it('pretraining batch and learning rate follow the DeepSeek LLM scaling law', () => {
    const plan = rigfitJson([
      'plan',
      '--gpu',
      'H100',
      '--gpus',
      '8',
      '--params',
      '1B',
      '--tokens',
      '20B',
      '--json',
    ])
    const law = deepseek(plan.model, plan.settings.seq, plan.tokens.budget)
    const batchTokens = plan.settings.effectiveBatch * plan.settings.seq
    // Within the band the paper finds near-optimal (a power-of-two batch, accumulation rounded to whole steps).
    expect(batchTokens / law.batchTokens).toBeGreaterThan(0.5)
    expect(batchTokens / law.batchTokens).toBeLessThan(2)
    expect(plan.settings.learningRate / law.learningRate).toBeGreaterThan(0.8)
    expect(plan.settings.learningRate / law.learningRate).toBeLessThan(1.25)
    const why = rigfit([
      'explain',
      'learningRate',
      '--gpu',
      'H100',
      '--gpus',
      '8',
      '--params',
      '1B',
      '--tokens',
      '20B',
    ])
    expect(why.stdout).toContain('DeepSeek LLM')
  })
})
