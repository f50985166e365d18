import { describe, expect, it } from 'vitest'
import { argv, type Json, refusal, withFlags } from './helpers/printed-flags.js'
import { rigfitJson } from './helpers/run-cli.js'

/**
 * Suggestions reproduce: every command rigfit prints as an alternative, run with the same other flags, gives the
 * plan it promised. Through the built CLI, as a user would run them.
 *
 * Refusals (exit 10) whose "These changes fit" alternatives cover each kind of change rigfit tries: QLoRA, a
 * shorter sequence, more of the device memory, more GPUs, on NVIDIA and AMD, in two modes, with and without pins.
 * Each alternative's flags go into the refused command; the plan must fit and predict the memory per device the
 * alternative promised. (8x A100 80GB with --ram 1024, whose alternative is another GPU: expert-plans.test.ts.)
 */
const REFUSED: string[][] = [
  '--mode conservative --gpu "GeForce RTX 4090" --model llama-3.1-8b --method lora --seq 2048',
  '--mode conservative --gpu "GeForce RTX 4090" --model qwen2.5-1.5b --method full --no-grad-ckpt --optimizer adamw --seq 4096',
  '--mode conservative --gpu A10G --model llama-3.2-3b --method full --sharding none --seq 2048',
  '--gpu "GeForce RTX 4090" --model llama-3.1-8b --method full --seq 4096',
  '--gpu "Radeon RX 7900 XTX" --model llama-3.1-8b --method full',
  '--gpu "GeForce RTX 4060 Ti 16GB" --model llama-3.1-8b --method lora --seq 2048 --lora-rank 64',
  // 70B on 12 GB cards fits only sharded over eight at the extreme mode's 95% (8 x 11.0 GiB).
  '--mode extreme --gpu "GeForce RTX 3060 12GB" --model llama-2-70b',
].map(argv)

/** A --recommend entry as the command that plans its hardware: `--gpu NAME --gpus N`, or `--instance ID`. */
function hardwareFlags(entry: Json): string[] {
  if (entry.kind === 'cloud') return ['--instance', String(entry.hardware).split(' ')[0] as string]
  return ['--gpu', String(entry.hardware).replace(/^\d+x /, ''), '--gpus', String(entry.gpus)]
}

describe('every printed alternative reproduces', () => {
  it('"These changes fit": each alternative of each refusal, run with the same other flags, plans what it promised', () => {
    let reproduced = 0
    const kinds = new Set<string>()
    for (const args of REFUSED) {
      const base = ['plan', ...args]
      const { status, error } = refusal(base)
      expect(status, args.join(' ')).toBe(10)
      expect(error.details.alternatives.length, args.join(' ')).toBeGreaterThan(0)
      for (const alternative of error.details.alternatives) {
        const command = withFlags(base, alternative.flags)
        const plan: Json = rigfitJson(command)
        expect(plan.memory?.perDevice?.total, command.join(' ')).toBe(alternative.predictedBytes)
        expect(plan.memory.capacityBytes, command.join(' ')).toBe(alternative.capacityBytes)
        reproduced += 1
        const flag = argv(alternative.flags)[0] as string
        kinds.add(flag === '--gpu' ? '--gpus' : flag)
      }
    }
    console.log(
      `fit alternatives: ${REFUSED.length} refusals, ${reproduced} alternatives reproduced (${[...kinds].join(', ')})`,
    )
    expect([...kinds].sort()).toEqual(['--gpus', '--method', '--seq', '--target-util'])
  }, 600_000)

  it('--recommend: each entry, planned with its hardware and the same other flags, gives its tokens/s and method', () => {
    const workload = ['--model', 'gpt2', '--time-budget', '2h', '--dataset-size', '200MB']
    const out: Json = rigfitJson(['plan', ...workload, '--recommend'])
    const fitting: Json[] = [...out.ranked, ...out.rejected.filter((r: Json) => r.fits)]
    // The cheapest and the unpriced, single GPUs and counts, cloud presets, and entries too slow for the budget.
    const sample = [
      ...out.ranked.slice(0, 4),
      ...out.ranked.filter((r: Json) => r.cost === null).slice(0, 2),
      ...out.ranked.filter((r: Json) => r.kind === 'cloud').slice(0, 1),
      ...out.rejected.filter((r: Json) => r.fits).slice(0, 2),
    ]
    expect(new Set(sample.map((r: Json) => r.kind))).toEqual(new Set(['gpu', 'cloud']))
    expect(sample.some((r: Json) => !r.withinBudget)).toBe(true)
    for (const entry of sample) {
      const command = ['plan', ...workload, ...hardwareFlags(entry)]
      const plan: Json = rigfitJson(command)
      expect(plan.settings?.method, command.join(' ')).toBe(entry.method)
      expect(plan.throughput.tokensPerSecond, command.join(' ')).toBeCloseTo(entry.tokensPerSecond, 6)
    }
    console.log(`recommend: ${sample.length} of ${fitting.length} fitting entries reproduced`)
  }, 600_000)
})
