import {
  BUDGET_TOLERANCE,
  checkPlan,
  deriveMetaPlans,
  planEstimateDevice,
  planForNodes,
  planPoint,
  reestimator,
  scalingEfficiency,
  type TrainingPlan,
  TrainingPlan as TrainingPlanSchema,
} from '@rigfit/core'
import { beforeAll, describe, expect, it } from 'vitest'
import { exportPlan } from '../src/export-plan.js'
import { FIXTURE_NAMES, loadFixturePlan } from './helpers/fixture-plans.js'
import { plannerPlan } from './helpers/planner-plan.js'

// The mode's line with the tolerance the planner and every revision hold it to.
const budgetOf = (plan: TrainingPlan) =>
  plan.memory.capacityBytes * plan.memory.budgetFraction * (1 + BUDGET_TOLERANCE)
const deviceBytes = (plan: TrainingPlan) => plan.memory.usedFraction * plan.memory.capacityBytes

describe('re-estimating a plan', () => {
  it("reproduces a planner-written plan's memory, speed and MFU at its own settings", async () => {
    for (const [machine, mode] of [
      ['desktop-rtx4090', 'balanced'],
      ['dgx-8x-h100', 'conservative'],
      ['vm-2core-xeon', 'conservative'],
    ] as const) {
      const plan = await plannerPlan({ machine, mode })
      const again = reestimator(plan)(planPoint(plan))
      expect(again.memory).toEqual(plan.memory)
      expect(again.throughput.tokensPerSecond).toBeCloseTo(plan.throughput.tokensPerSecond, 6)
      expect(again.throughput.mfu).toBeCloseTo(plan.throughput.mfu, 9)
    }
  })

  it('recovers the peak rate from throughput and MFU, and refuses plans without them', () => {
    const plan = loadFixturePlan('rtx4090-bf16')
    const halfMfu = { ...plan, throughput: { ...plan.throughput, mfu: plan.throughput.mfu / 2 } }
    expect(planEstimateDevice(halfMfu).fp16TensorTflops).toBeCloseTo(
      2 * (planEstimateDevice(plan).fp16TensorTflops ?? 0),
    )
    const still = { ...plan, throughput: { ...plan.throughput, mfu: 0 } }
    expect(() => planEstimateDevice(still)).toThrow(/cannot be re-estimated/)
    const impossible = { ...plan, throughput: { ...plan.throughput, mfu: 0.99 } }
    expect(() => planEstimateDevice(impossible)).toThrow(/matrix multiplies alone take longer/)
  })
})

describe('phase A/B meta-config', () => {
  const fixtures = FIXTURE_NAMES
  const planner: TrainingPlan[] = []
  beforeAll(async () => {
    planner.push(
      await plannerPlan({ machine: 'desktop-rtx4090', mode: 'balanced' }),
      await plannerPlan({ machine: 'desktop-rtx4090', mode: 'extreme' }),
      await plannerPlan({ machine: 'macbook-m2-16gb', mode: 'balanced' }),
    )
  })
  // Plans whose sequence splits into a phase A of at least 128 tokens.
  const everyPlan = () =>
    [...fixtures.map(loadFixturePlan), ...planner].filter(
      (p) => p.settings.seq % 4 === 0 && p.settings.seq >= 512,
    )

  it('derives two valid, self-consistent plans', () => {
    for (const plan of everyPlan()) {
      const meta = deriveMetaPlans(plan)
      for (const p of [meta.phaseA, meta.phaseB]) {
        expect(TrainingPlanSchema.safeParse(p).success).toBe(true)
        expect(checkPlan(p)).toEqual([])
      }
    }
  })

  it("predicts phase A within the plan's memory budget and faster than phase B", () => {
    for (const plan of everyPlan()) {
      const { phaseA, phaseB } = deriveMetaPlans(plan)
      expect(deviceBytes(phaseA)).toBeLessThanOrEqual(budgetOf(plan))
      expect(phaseA.memory.perDevice.total).toBeLessThanOrEqual(budgetOf(plan))
      expect(phaseA.throughput.tokensPerSecond).toBeGreaterThan(phaseB.throughput.tokensPerSecond)
    }
  })

  it("phase B of a planner-written plan is the plan's own memory and speed", () => {
    for (const plan of planner) {
      const { phaseB } = deriveMetaPlans(plan)
      expect(phaseB.settings).toEqual(plan.settings)
      expect(phaseB.memory).toEqual(plan.memory)
      expect(phaseB.throughput.tokensPerSecond).toBeCloseTo(plan.throughput.tokensPerSecond, 6)
      expect(phaseB.warnings).toEqual(plan.warnings)
    }
  })

  /** Phase A's micro-batch x4 at a quarter of the sequence, as the estimator sees it. */
  const quarter = (plan: TrainingPlan) => ({
    seq: plan.settings.seq / 4,
    microBatch: plan.settings.microBatch * 4,
    gradAccum: plan.settings.gradAccum,
    nodes: plan.settings.nodes,
  })

  it('phase A: a quarter of the sequence, micro-batch x4, the same accumulation and tokens per step', () => {
    const fits = everyPlan().filter((plan) => reestimator(plan)(quarter(plan)).fits)
    expect(fits.length).toBeGreaterThan(0)
    for (const plan of fits) {
      const { phaseA } = deriveMetaPlans(plan)
      const q = quarter(plan)
      expect([phaseA.settings.seq, phaseA.settings.microBatch, phaseA.settings.gradAccum]).toEqual([
        q.seq,
        q.microBatch,
        q.gradAccum,
      ])
      expect(phaseA.settings.effectiveBatch * phaseA.settings.seq).toBe(
        plan.settings.effectiveBatch * plan.settings.seq,
      )
      expect(phaseA.memory.perDevice.activations).toBeGreaterThan(0)
      expect(phaseA.warnings.map((w) => w.id)).not.toContain('meta-phase-a-micro-batch')
    }
  })

  it('lowers phase A micro-batch to the budget and raises accumulation to hold the tokens per step', () => {
    // Phase A's micro-steps hold the plan's tokens, so it needs about the plan's memory: it is lowered only when
    // the budget is tighter than that. Each plan gets a budget (with its tolerance) one byte short of phase A's x4
    // micro-batch.
    const tight = everyPlan().map((plan) => {
      const need = reestimator(plan)(quarter(plan)).deviceBytes
      return {
        ...plan,
        memory: {
          ...plan.memory,
          budgetFraction: (need - 1) / plan.memory.capacityBytes / (1 + BUDGET_TOLERANCE),
        },
      }
    })
    expect(tight.length).toBeGreaterThan(0)
    for (const plan of tight) {
      const at = reestimator(plan)
      const q = quarter(plan)
      const meta = deriveMetaPlans(plan)
      const a = meta.phaseA.settings
      const perStep = q.microBatch * q.gradAccum
      expect(a.microBatch).toBeLessThan(q.microBatch)
      expect(a.microBatch * a.gradAccum).toBe(perStep)
      expect(a.effectiveBatch * a.seq).toBe(plan.settings.effectiveBatch * plan.settings.seq)
      // The largest micro-batch that fits: the next divisor of the step up does not.
      const nextUp = [...Array(q.microBatch).keys()]
        .map((i) => i + 1)
        .find((mb) => mb > a.microBatch && perStep % mb === 0) as number
      expect(at({ ...q, microBatch: nextUp, gradAccum: perStep / nextUp }).fits).toBe(false)
      expect(meta.phaseA.warnings.map((w) => w.id)).toContain('meta-phase-a-micro-batch')
    }
  })

  it('splits the token budget 90/10 and gives each phase its own budget, steps, time and energy', () => {
    const plan = loadFixturePlan('rtx4090-bf16')
    const meta = deriveMetaPlans(plan)
    expect(meta.phaseA.tokens.budget + meta.phaseB.tokens.budget).toBe(plan.tokens.budget)
    expect(meta.phaseA.tokens.budget).toBe(Math.round(plan.tokens.budget * 0.9))
    for (const p of [meta.phaseA, meta.phaseB]) {
      expect(p.time.steps).toBe(Math.ceil(p.tokens.budget / (p.settings.effectiveBatch * p.settings.seq)))
      expect(p.time.totalHours).toBeCloseTo(p.tokens.budget / p.throughput.tokensPerSecond / 3600)
      expect(p.power.energyKWh).toBeCloseTo((p.power.watts * p.time.totalHours) / 1000)
    }
    expect(meta.totalHours).toBeLessThan(plan.time.totalHours)
  })

  it('refuses plans whose sequence is too short to split', () => {
    const plan = loadFixturePlan('rtx4090-bf16')
    const short = { ...plan, settings: { ...plan.settings, seq: 256 } }
    expect(() => deriveMetaPlans(short)).toThrow(/divisible by 4 with phase A at least 128/)
  })

  it('exports phase-a/ and phase-b/ plus rigfit-meta.json with each phase memory', () => {
    const result = exportPlan(loadFixturePlan('rtx4090-bf16'), { format: 'rigfit', meta: true })
    expect(result.files.map((f) => f.path)).toEqual([
      'phase-a/rigfit-plan.json',
      'phase-b/rigfit-plan.json',
      'rigfit-meta.json',
      'rigfit-stack.json',
    ])
    const index = JSON.parse(result.files[2]?.content ?? '{}')
    expect(index.phases.map((p: { resumeFrom: string | null }) => p.resumeFrom)).toEqual([null, 'phase-a'])
    const phaseA = JSON.parse(result.files[0]?.content ?? '{}') as TrainingPlan
    expect(index.phases[0].memoryBytes).toBe(phaseA.memory.perDevice.total)
    const phases = [
      JSON.parse(result.files[0]?.content ?? '{}'),
      JSON.parse(result.files[1]?.content ?? '{}'),
    ]
    const phaseWarnings = phases.flatMap((p: TrainingPlan) => p.warnings.map((w) => w.id))
    for (const id of phaseWarnings) expect(result.warnings.map((w) => w.id)).toContain(id)
  })
})

describe('--nodes', () => {
  const plan = loadFixturePlan('a100x4-zero2') // ZeRO-2 on 4 GPUs, an even accumulation
  const s = plan.settings

  it('keeps the effective batch by shrinking accumulation', () => {
    expect(s.gradAccum % 2).toBe(0)
    const two = planForNodes(plan, 2)
    expect([two.settings.nodes, two.settings.gradAccum, two.settings.effectiveBatch]).toEqual([
      2,
      s.gradAccum / 2,
      s.effectiveBatch,
    ])
    expect(TrainingPlanSchema.safeParse(two).success).toBe(true)
    expect(checkPlan(two)).toEqual([])
  })

  it("shrinks time by core's scaling efficiency, whatever the interconnect, and recomputes energy", () => {
    // ZeRO-2 over twice the ranks with half the accumulation: the per-device step halves exactly.
    const two = planForNodes(plan, 2)
    for (const link of ['nvlink', 'pcie'] as const) {
      const scaling = scalingEfficiency(4, 2, 'zero2', link) / scalingEfficiency(4, 1, 'zero2', link)
      expect(two.throughput.tokensPerSecond).toBeCloseTo(plan.throughput.tokensPerSecond * 2 * scaling)
      if (plan.tokens.binding === 'time-budget') {
        // The time budget binds: the same hours train the tokens the faster job reaches.
        expect(two.time.totalHours).toBeCloseTo(plan.time.totalHours, 1)
        expect(two.tokens.budget / plan.tokens.budget).toBeCloseTo(2 * scaling, 2)
      } else expect(two.time.totalHours).toBeCloseTo(plan.time.totalHours / (2 * scaling))
    }
    expect(two.time.steps).toBe(Math.ceil(two.tokens.budget / (s.effectiveBatch * s.seq)))
    expect(two.power.watts).toBe(plan.power.watts * 2)
    expect(two.power.energyKWh).toBeCloseTo((two.power.watts * two.time.totalHours) / 1000)
    expect(two.warnings.map((w) => w.id)).toContain('multi-node-scaling')
  })

  it('re-estimates ZeRO memory over every rank of the job', () => {
    const own = reestimator(plan)(planPoint(plan)).memory.perDevice
    const two = planForNodes(plan, 2).memory.perDevice
    expect(two.optimizer).toBeCloseTo(own.optimizer / 2, -1)
    expect(two.gradients).toBeCloseTo(own.gradients / 2, -1)
    expect(two.weights).toBe(own.weights)
  })

  it('keeps DDP memory per device and shrinks time by the inter-node efficiency on a planner-written plan', async () => {
    // 8 GPUs, DDP, accumulation 1.
    const ddp = await plannerPlan({ machine: 'dgx-8x-h100', mode: 'conservative', model: 'gpt2' })
    expect([ddp.settings.strategy, ddp.settings.gradAccum]).toEqual(['ddp', 1])
    const two = planForNodes(ddp, 2)
    expect(two.memory).toEqual(ddp.memory)
    const scaling = scalingEfficiency(8, 2, 'none', 'nvlink') / scalingEfficiency(8, 1, 'none', 'nvlink')
    expect(two.throughput.tokensPerSecond).toBeCloseTo(ddp.throughput.tokensPerSecond * 2 * scaling)
    // A fine-tune bound by its time budget stays bound by it: the same hours, twice the tokens and more.
    expect(ddp.tokens.binding).toBe('time-budget')
    expect(two.tokens.binding).toBe('time-budget')
    expect(two.time.totalHours).toBeCloseTo(ddp.time.totalHours, 1)
    expect(two.tokens.budget / ddp.tokens.budget).toBeCloseTo(2 * scaling, 2)
  })

  it('shrinks a pretraining plan bound by Chinchilla by the inter-node efficiency', async () => {
    const pretrain = await plannerPlan({ machine: 'server-4x-a100-40gb', mode: 'conservative' })
    expect(pretrain.tokens.binding).toBe('chinchilla')
    const two = planForNodes(pretrain, 2)
    expect(two.tokens.binding).toBe('chinchilla')
    expect(two.tokens.budget / pretrain.tokens.budget).toBeCloseTo(1, 2)
    const speedup = two.throughput.tokensPerSecond / pretrain.throughput.tokensPerSecond
    expect(two.time.totalHours).toBeCloseTo(pretrain.time.totalHours / speedup, 1)
  })

  it('a smaller accumulation only costs: a single-GPU plan gains at most N x the efficiency', async () => {
    const single = await plannerPlan({ machine: 'desktop-rtx4090', mode: 'balanced' })
    const four = planForNodes(single, 4)
    const ideal = single.throughput.tokensPerSecond * 4 * scalingEfficiency(1, 4, 'none', 'none')
    expect(four.throughput.tokensPerSecond).toBeLessThanOrEqual(ideal)
    expect(four.throughput.tokensPerSecond).toBeGreaterThan(0.9 * ideal)
  })

  it('warns when the effective batch cannot be held', () => {
    // Enough nodes that one micro-batch on every GPU is already more than the effective batch.
    const nodes = 2 * Math.ceil(s.effectiveBatch / (s.microBatch * 4))
    const many = planForNodes(plan, nodes)
    expect(many.settings.effectiveBatch).toBe(s.microBatch * 4 * nodes)
    expect(many.settings.effectiveBatch).toBeGreaterThan(s.effectiveBatch)
    const sixteen = many
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
