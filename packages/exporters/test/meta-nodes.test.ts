import { TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { checkPlan } from '../src/check-plan.js'
import { exportPlan } from '../src/export-plan.js'
import { deriveMetaPlans, trainingFlopsPerToken } from '../src/meta-phases.js'
import { MULTI_NODE_EFFICIENCY, planForNodes } from '../src/nodes.js'
import { loadFixturePlan } from './helpers/build-plan.js'

describe('phase A/B meta-config', () => {
  const plan = loadFixturePlan('rtx4090-bf16')
  const meta = deriveMetaPlans(plan)

  it('derives two valid, self-consistent plans', () => {
    for (const p of [meta.phaseA, meta.phaseB]) {
      expect(TrainingPlan.safeParse(p).success).toBe(true)
      expect(checkPlan(p)).toEqual([])
    }
  })

  it('phase A trains at a quarter of the sequence with the same tokens per micro-step; phase B at full length', () => {
    expect(meta.phaseA.settings.seq).toBe(256)
    expect(meta.phaseA.settings.microBatch * meta.phaseA.settings.seq).toBe(
      plan.settings.microBatch * plan.settings.seq,
    )
    expect(meta.phaseB.settings).toEqual(plan.settings)
  })

  it('splits the token budget 90/10 and gives each phase its own budget, steps and time', () => {
    expect(meta.phaseA.tokens.budget + meta.phaseB.tokens.budget).toBe(plan.tokens.budget)
    expect(meta.phaseA.tokens.budget).toBe(Math.round(plan.tokens.budget * 0.9))
    for (const p of [meta.phaseA, meta.phaseB]) {
      expect(p.time.steps).toBe(Math.ceil(p.tokens.budget / (p.settings.effectiveBatch * p.settings.seq)))
      expect(p.time.totalHours).toBeCloseTo(p.tokens.budget / p.throughput.tokensPerSecond / 3600)
    }
    expect(meta.totalHours).toBeLessThan(plan.time.totalHours)
  })

  it('phase A speed follows the attention FLOPs saved, nothing more', () => {
    const ratio = trainingFlopsPerToken(plan, 1024) / trainingFlopsPerToken(plan, 256)
    expect(meta.phaseA.throughput.tokensPerSecond).toBeCloseTo(plan.throughput.tokensPerSecond * ratio)
    expect(ratio).toBeGreaterThan(1)
    expect(ratio).toBeLessThan(1.5)
  })

  it('refuses plans whose sequence is too short to split', () => {
    const short = { ...plan, settings: { ...plan.settings, seq: 256 } }
    expect(() => deriveMetaPlans(short)).toThrow(/divisible by 4 with phase A at least 128/)
  })

  it('exports phase-a/ and phase-b/ plus rigfit-meta.json', () => {
    const result = exportPlan(plan, { format: 'rigfit', meta: true })
    expect(result.files.map((f) => f.path)).toEqual([
      'phase-a/rigfit-plan.json',
      'phase-b/rigfit-plan.json',
      'rigfit-meta.json',
    ])
    const index = JSON.parse(result.files[2]?.content ?? '{}')
    expect(index.phases.map((p: { resumeFrom: string | null }) => p.resumeFrom)).toEqual([null, 'phase-a'])
  })
})

describe('--nodes', () => {
  const plan = loadFixturePlan('a100x4-zero2') // micro 8 x accum 8 x 4 GPUs = 256

  it('keeps the effective batch by shrinking accumulation', () => {
    const two = planForNodes(plan, 2)
    expect([two.settings.nodes, two.settings.gradAccum, two.settings.effectiveBatch]).toEqual([2, 4, 256])
    expect(checkPlan(two)).toEqual([])
  })

  it('scales throughput with the stated efficiency and recomputes time and energy', () => {
    const two = planForNodes(plan, 2)
    expect(two.throughput.tokensPerSecond).toBeCloseTo(
      plan.throughput.tokensPerSecond * 2 * MULTI_NODE_EFFICIENCY,
    )
    expect(two.time.totalHours).toBeCloseTo(plan.tokens.budget / two.throughput.tokensPerSecond / 3600)
    expect(two.power.watts).toBe(plan.power.watts * 2)
    expect(two.warnings.map((w) => w.id)).toContain('multi-node-scaling')
  })

  it('warns when the effective batch cannot be held', () => {
    const sixteen = planForNodes(plan, 16) // 8 x 4 x 16 = 512 per step with accumulation 1
    expect(sixteen.settings.effectiveBatch).toBe(512)
    expect(sixteen.warnings.map((w) => w.id)).toContain('multi-node-effective-batch')
  })

  it('refuses mps plans and bad counts, and checks --hosts against the node count', () => {
    expect(() => planForNodes(loadFixturePlan('m2-mps'), 2)).toThrow(/mps/)
    expect(() => planForNodes(plan, 0)).toThrow(/at least 1/)
    expect(() => exportPlan(plan, { format: 'deepspeed', nodes: 2, hosts: ['a'] })).toThrow(/names 1 host/)
    const files = exportPlan(plan, { format: 'deepspeed', nodes: 2, hosts: ['gpu-a', 'gpu-b'] }).files
    expect(files.find((f) => f.path === 'hostfile')?.content).toBe('gpu-a slots=4\ngpu-b slots=4\n')
  })
})
