import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { rigfit, rigfitJson } from './helpers/run-cli.js'

const server = ['--gpu', 'H100', '--gpus', '8']

describe('pretraining a chosen size: --params, --tokens, --method pretrain', () => {
  it.each([
    ['125M', 125e6],
    ['1B', 1e9],
    ['3B', 3e9],
  ])('--params %s pretrains a generated model of that size, and prints its shape', (text, params) => {
    const plan = rigfitJson(['plan', ...server, '--params', text])
    expect(plan.workload.kind).toBe('pretrain')
    expect(plan.model.source).toBe('generated')
    expect(Math.abs(plan.params.total / params - 1)).toBeLessThan(0.1)
    const printed = rigfit(['plan', ...server, '--params', text])
    expect(printed.stdout).toContain(`${plan.model.layers} layers x ${plan.model.hidden} hidden`)
  })

  it('--tokens 20B is the target: trained in whole steps, Chinchilla still reported, the time not capped', () => {
    const plan = rigfitJson(['plan', ...server, '--params', '1B', '--tokens', '20B'])
    const perStep = plan.settings.effectiveBatch * plan.settings.seq
    expect(plan.tokens.binding).toBe('target')
    expect(plan.tokens.budget).toBeLessThanOrEqual(20e9)
    expect(plan.tokens.budget).toBeGreaterThan(20e9 - perStep)
    expect(plan.tokens.chinchillaTokens).toBe(Math.round(plan.params.total * 20))
    expect(plan.time.totalHours).toBeCloseTo(plan.tokens.budget / plan.throughput.tokensPerSecond / 3600, 1)
  })

  it('--time-budget still bounds a --tokens target', () => {
    const plan = rigfitJson(['plan', ...server, '--params', '1B', '--tokens', '20B', '--time-budget', '1h'])
    expect(plan.tokens.binding).toBe('time-budget')
    expect(plan.time.totalHours).toBeLessThanOrEqual(1)
  })

  it('--model --method pretrain trains that architecture from scratch, and the HF export starts from its config', () => {
    const asked = ['--gpu', 'A100 80GB', '--model', 'llama-3.2-1b', '--method', 'pretrain', '--tokens', '2B']
    const plan = rigfitJson(['plan', ...asked])
    expect(plan.workload.kind).toBe('pretrain')
    expect(plan.model.id).toBe('llama-3.2-1b')
    expect(plan.settings.method).toBe('full')
    // A pretraining rate by size, not a fine-tune's 2e-5.
    expect(plan.settings.learningRate).toBeGreaterThan(1e-4)
    const out = join(mkdtempSync(join(tmpdir(), 'rigfit-pretrain-')), 'hf')
    const exported = rigfit(['export', '--mode', 'balanced', '--format', 'hf', '--out', out, ...asked])
    expect(exported.status, exported.stderr).toBe(0)
    const modelArgs = JSON.parse(readFileSync(join(out, 'model_args.json'), 'utf8'))
    expect(modelArgs.model_name_or_path).toBeUndefined()
    expect(modelArgs.config_name).toBe('config.json')
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8'))
    expect(config).toMatchObject({
      hidden_size: plan.model.hidden,
      num_hidden_layers: plan.model.layers,
      vocab_size: plan.model.vocab,
    })
  })

  it('a fine-tune trains all of its data when no --time-budget bounds it', () => {
    const plan = rigfitJson([
      'plan',
      '--gpu',
      'RTX 4090',
      '--model',
      'llama-3.2-1b',
      '--method',
      'lora',
      '--examples',
      '200k',
      '--tokens-per-example',
      '1k',
    ])
    expect(plan.tokens.binding).toBe('dataset')
    expect(plan.tokens.budget).toBeGreaterThan(200e6 - plan.settings.effectiveBatch * plan.settings.seq)
  })

  it.each([
    [['--params', '1B', '--method', 'lora'], /--params pretrains a new model/],
    [['--params', '500'], /--params "500" is outside 1M to 1T/],
    [['--model', 'gpt2', '--tokens', '1B'], /--tokens sets what a pretraining run trains on/],
    [['--model', 'gpt2', '--params', '1B'], /--params=1B cannot also be provided when using --model/],
  ])('%j is refused with a usage error', (args, message) => {
    const result = rigfit(['plan', ...server, ...args])
    expect(result.status).toBe(2)
    expect(result.stderr).toMatch(message)
  })
})
