import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { rigfit, rigfitJson } from './helpers/run-cli.js'

const MODES = ['conservative', 'balanced', 'extreme'] as const
const GIB = 2 ** 30

describe('plan, explain and export keep what the user pinned', () => {
  const machine = ['--gpu', 'RTX 4090', '--model', 'llama-3.2-1b', '--seq', '512']
  const pins = [
    '--micro-batch',
    '3',
    '--grad-accum',
    '5',
    '--precision',
    'bf16-mixed',
    '--optimizer',
    'adamw',
    '--no-grad-ckpt',
    '--attention',
    'sdpa',
    '--lora-rank',
    '8',
    '--lora-targets',
    'q,v,down',
  ]

  it.each(MODES)('%s: every pin is in the plan, traced to its flag', (mode) => {
    const plan = rigfitJson(['plan', '--mode', mode, ...machine, ...pins])
    expect(plan.settings).toMatchObject({
      microBatch: 3,
      gradAccum: 5,
      precision: 'bf16-mixed',
      optimizer: 'adamw',
      gradCheckpointing: false,
      attention: 'sdpa',
      lora: { rank: 8, targets: ['q', 'v', 'down'] },
    })
    expect(['lora', 'qlora']).toContain(plan.settings.method)
    for (const setting of ['microBatch', 'gradAccum', 'precision', 'gradCheckpointing', 'lora']) {
      const entry = plan.trace.find((candidate: { setting: string }) => candidate.setting === setting)
      expect(entry, setting).toMatchObject({ pack: 'command-line', layer: 'user' })
    }
  })

  it('explain names the flag that decided a pinned setting', () => {
    const explained = rigfitJson(['explain', 'microBatch', ...machine, ...pins])
    expect(explained.trace[0]).toMatchObject({ value: 3, pack: 'command-line', rule: '--micro-batch 3' })
  })

  it('the HF export trains with the pinned batch, checkpointing and adapters', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'rigfit-pins-')), 'hf')
    const result = rigfit([
      'export',
      '--mode',
      'balanced',
      '--format',
      'hf',
      '--out',
      out,
      ...machine,
      ...pins,
    ])
    expect(result.status, result.stderr).toBe(0)
    const args = JSON.parse(readFileSync(join(out, 'training_args.json'), 'utf8'))
    expect(args).toMatchObject({
      per_device_train_batch_size: 3,
      gradient_accumulation_steps: 5,
      gradient_checkpointing: false,
      bf16: true,
    })
    const adapter = JSON.parse(readFileSync(join(out, 'adapter_config.json'), 'utf8'))
    expect(adapter.r).toBe(8)
    expect(adapter.target_modules).toEqual(['q_proj', 'v_proj', 'down_proj'])
  })

  it('--quant nf4 plans QLoRA, --quant int8 LoRA over an 8-bit base', () => {
    const qlora = rigfitJson(['plan', ...machine, '--quant', 'nf4'])
    expect(qlora.settings).toMatchObject({ method: 'qlora', quant: 'nf4' })
    const int8 = rigfitJson(['plan', ...machine, '--quant', 'int8'])
    expect(int8.settings).toMatchObject({ method: 'lora', quant: 'int8' })
  })

  it.each([
    [['--method', 'full', '--lora-rank', '8'], /--lora-rank 8 cannot go with --method full/],
    [['--method', 'lora', '--quant', 'nf4'], /--quant nf4 cannot go with --method lora/],
    [['--offload', 'all', '--sharding', 'zero2'], /--offload all cannot run with --sharding zero2/],
    [['--lora-targets', 'q,x'], /unknown layer "x"/],
  ])('contradicting pins %j are a usage error', (extra, message) => {
    const result = rigfit(['plan', ...machine, ...extra])
    expect(result.status).toBe(2)
    expect(result.stderr).toMatch(message)
  })
})

describe('when nothing fits, the smallest changes that would, each planned for real', () => {
  // LoRA on an 8B model at 2048 tokens: the 16-bit base alone is most of the balanced budget of a 24 GB card.
  const asked = ['--gpu', 'RTX 4090', '--model', 'llama-3-8b', '--method', 'lora', '--seq', '2048']

  it('names each change with its predicted memory, shows the nearest plan, exits 10', () => {
    const text = rigfit(['plan', ...asked])
    expect(text.status).toBe(10)
    expect(text.stderr).toMatch(/E_NO_PLAN_FITS/)
    expect(text.stderr).toMatch(/--method qlora: .*GiB per device/)
    expect(text.stdout).toMatch(/The nearest plan that fits, with --method qlora/)
    expect(text.stdout).toMatch(/Memory per device: /)
  })

  it('every alternative, run as the command it names, plans the memory it promised', () => {
    const failed = rigfit(['plan', ...asked, '--json'])
    expect(failed.status).toBe(10)
    const { details } = JSON.parse(failed.stdout).error
    expect(details.alternatives.length).toBeGreaterThanOrEqual(3)
    expect(details.nearestPlan.settings.method).toBe('qlora')
    for (const alternative of details.alternatives) {
      const plan = rigfitJson(['plan', ...changed(asked, splitFlags(alternative.flags))])
      expect(plan.memory.perDevice.total, alternative.flags).toBe(alternative.predictedBytes)
      expect(plan.memory.perDevice.total).toBeLessThanOrEqual(alternative.capacityBytes)
    }
  })

  it('a pinned micro-batch that cannot fit is named, with the plan that fits without it', () => {
    const failed = rigfit([
      'plan',
      '--gpu',
      'RTX 4090',
      '--model',
      'llama-3.2-1b',
      '--seq',
      '2048',
      '--micro-batch',
      '512',
      '--json',
    ])
    expect(failed.status).toBe(10)
    const { details } = JSON.parse(failed.stdout).error
    expect(details.alternatives[0].flags).toBe('drop --micro-batch 512')
    expect(details.nearestPlan.settings.microBatch).toBeLessThan(512)
    expect(details.nearestPlan.memory.perDevice.total).toBeLessThan(24 * GIB)
  })
})

/** `--gpu "GeForce RTX 4090" --gpus 2` as arguments. */
function splitFlags(text: string): string[] {
  return [...text.matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? '')
}

/** The asked arguments with the change's flags (`--seq 512`, `--gpu X --gpus 2`) in place of the same flags. */
function changed(asked: string[], change: string[]): string[] {
  const replaced = new Set(change.filter((token) => token.startsWith('--')))
  const kept: string[] = []
  for (let i = 0; i < asked.length; i += 2) {
    if (!replaced.has(asked[i] as string)) kept.push(asked[i] as string, asked[i + 1] as string)
  }
  return [...kept, ...change]
}
