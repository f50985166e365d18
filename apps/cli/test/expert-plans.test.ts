import { describe, expect, it } from 'vitest'
import { type Json, refusal, withFlags } from './helpers/printed-flags.js'
import { rigfit, rigfitJson } from './helpers/run-cli.js'

const LLAMA70B = ['--model', 'llama-2-70b', '--method', 'full', '--dataset-tokens', '100M']

describe('plans an expert would sign', () => {
  it('README question 1: a plan within 2 % of the balanced line does not pull in ZeRO-Offload for the adapter states', () => {
    const result: Json = rigfitJson([
      'analyze',
      ...['--gpu', 'RTX 4090', '--model', 'llama-3-8b', '--examples', '50k', '--tokens-per-example', '1k'],
    ])
    const balanced = result.plans.balanced
    expect(balanced.settings.offload).toBe('none')
    expect(balanced.settings.strategy).toBe('single')
    // Within the 2 % tolerance of the line, and the trace says so.
    const line = balanced.memory.capacityBytes * balanced.memory.budgetFraction
    expect(balanced.memory.perDevice.total).toBeLessThanOrEqual(line * 1.02)
    const offload = balanced.trace.filter((t: Json) => t.setting === 'offload').at(-1)
    if (balanced.memory.perDevice.total > line) expect(offload.reason).toMatch(/within its 2 % tolerance/)
  })

  it('8x H200 never plans a 70B full fine-tune slower than 8x A100 80GB; the checkpointing rule yields to the computed speed', () => {
    const plan = (gpu: string): Json =>
      rigfitJson(['plan', '--gpu', gpu, '--gpus', '8', '--cpus', '256', ...LLAMA70B])
    const h200 = plan('H200 SXM 141GB')
    const a100 = plan('A100 80GB SXM4')
    expect(h200.throughput.tokensPerSecond).toBeGreaterThanOrEqual(a100.throughput.tokensPerSecond)
    expect(h200.time.totalHours).toBeLessThanOrEqual(a100.time.totalHours)
    // The rule prefers no recomputation; the plan departs because the estimate predicts the preferred setup slower.
    const departed = h200.warnings.find((w: Json) => w.id === 'rule-preference-relaxed')
    if (h200.settings.gradCheckpointing) {
      expect(departed.message).toMatch(/preferred settings fit but are predicted slower \((\d+) tokens\/s/)
      const preferred = Number(/predicted slower \((\d+) tokens\/s/.exec(departed.message)?.[1])
      expect(preferred).toBeLessThan(h200.throughput.tokensPerSecond)
    }
    // explain lists the setups compared, with their predicted speed and time.
    const explained = rigfit([
      'explain',
      'gradCheckpointing',
      ...['--gpu', 'H200 SXM 141GB', '--gpus', '8', '--cpus', '256', ...LLAMA70B],
    ])
    expect(explained.status).toBe(0)
    expect(explained.stdout).toMatch(/compared\s+seq \d+, .*tokens\/s/)
  })

  it('every "these changes fit" alternative, run with the same other flags (--ram 1024), gives the plan it promised', () => {
    const base = ['plan', '--gpu', 'A100 80GB SXM4', '--gpus', '8', '--ram', '1024', ...LLAMA70B]
    const { status, error } = refusal(base)
    expect(status).toBe(10)
    expect(error.details.binding).toBe('host-ram')
    expect(error.details.alternatives.length).toBeGreaterThan(0)
    for (const alternative of error.details.alternatives) {
      const plan: Json = rigfitJson(withFlags(base, alternative.flags))
      expect(plan.memory.perDevice.total, alternative.flags).toBe(alternative.predictedBytes)
    }
  })

  it('gpt2 --seq 4096 names the 1024-position context as the limit, not memory', () => {
    const { status, error } = refusal(['plan', '--gpu', 'RTX 4090', '--model', 'gpt2', '--seq', '4096'])
    expect(status).toBe(10)
    expect(error.message).toMatch(/built for 1024 positions/)
    expect(error.message).not.toMatch(/budget/)
    expect(error.details.binding).toBe('context-length')
    expect(error.details.maxPositions).toBe(1024)
  })

  it('never suggests QLoRA when QLoRA was tried, and says what binds in details', () => {
    const long = refusal(['plan', '--gpu', 'RTX 4090', '--model', 'llama-3.2-1b', '--seq', '300000'])
    expect(long.error.details.binding).toBe('context-length')
    expect(long.error.suggestion).not.toMatch(/--method qlora|try qlora/i)
    const small = refusal(['plan', '--gpu', 'RTX 3060', '--model', 'llama-2-70b'])
    expect(small.status).toBe(10)
    expect(small.error.details.binding).toBe('device-memory')
    expect(small.error.details.tried.methods).toContain('qlora')
    expect(small.error.suggestion).not.toMatch(/--method qlora|try qlora/i)
    expect(small.error.details.leastNeedBytes).toBeGreaterThan(small.error.details.budgetBytes)
  })

  it('refuses FSDP with optimizer-only offload, which FSDP cannot run, naming ZeRO-3 instead', () => {
    const run = rigfit([
      'plan',
      ...['--gpu', 'A100 80GB SXM4', '--gpus', '4', '--model', 'llama-3.1-8b'],
      ...['--sharding', 'fsdp', '--offload', 'optimizer'],
    ])
    expect(run.status).toBe(2)
    expect(run.stderr).toMatch(/no optimizer-only form/)
    expect(run.stderr).toMatch(/zero3/)
  })
})
