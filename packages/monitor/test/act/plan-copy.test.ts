import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { assertPlanConsistent, type LaunchSettings, TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { replanForGpus } from '../../src/act/gpu-failover.js'
import { initialSettings } from '../../src/act/launch-settings.js'
import { nextOomSettings } from '../../src/act/oom-ladder.js'
import { planForLaunch, writePlanCopy } from '../../src/act/plan-copy.js'
import { readHostCpuDevice } from '../../src/sampling/host-cpu-device.js'

const plan = TrainingPlan.parse(
  JSON.parse(
    readFileSync(new URL('../fixtures/plans/rtx4090-gpt2-124m-balanced.json', import.meta.url), 'utf8'),
  ),
)
const settings = initialSettings(plan, {}, { device: 'cpu', gpus: 0 }) as NonNullable<
  ReturnType<typeof initialSettings>
>

const fixtures = new URL('../fixtures/', import.meta.url)
const hostCpu = (memoryBytes: number) =>
  readHostCpuDevice({
    procRoot: fileURLToPath(new URL('proc/ryzen-7950x-t0', fixtures)),
    sysfsRoot: fileURLToPath(new URL('sysfs/ryzen-7950x-workstation', fixtures)),
    memoryBytes,
    availableCores: 32,
  })
const copyAt = (launch: LaunchSettings, base: TrainingPlan = plan) => planForLaunch(base, launch, [], hostCpu)

/** The identities a consistent copy keeps between its settings and its figures. */
function expectConsistent(copy: TrainingPlan): void {
  expect(() => TrainingPlan.parse(copy)).not.toThrow()
  assertPlanConsistent(copy, 'copy')
  const s = copy.settings
  const { throughput, memory, time } = copy
  expect(s.effectiveBatch).toBe(s.microBatch * s.gradAccum * Math.max(s.gpus, 1) * s.nodes)
  expect(memory.usedFraction).toBeCloseTo(memory.perDevice.total / memory.capacityBytes, 12)
  expect(throughput.tokensPerSecond).toBeCloseTo(throughput.tokensPerSecondPerDevice * Math.max(s.gpus, 1), 6)
  expect(throughput.stepSeconds * throughput.tokensPerSecond).toBeCloseTo(s.effectiveBatch * s.seq, 6)
  expect(time.totalHours).toBeCloseTo(copy.tokens.budget / throughput.tokensPerSecond / 3600, 9)
  expect(time.steps).toBe(Math.ceil(copy.tokens.budget / (s.effectiveBatch * s.seq)))
  expect(copy.power.energyKWh).toBeCloseTo((copy.power.watts * time.totalHours) / 1000, 9)
}

describe('planForLaunch', () => {
  it('leaves the prediction alone when the launch runs the plan as written', () => {
    const copy = planForLaunch(plan, settings, ['a note'], () => {
      throw new Error('the host CPU is only read for a CPU failover')
    })
    expect({ ...copy, warnings: [] }).toEqual({ ...plan, warnings: [] })
    expect(copy.warnings.map((w) => [w.id, w.message])).toEqual([['monitor-change-1', 'a note']])
  })

  it('re-estimates memory and speed down the OOM ladder: each halved micro-batch needs less memory', () => {
    const rungs: TrainingPlan[] = []
    let launch = settings
    while (launch.microBatch > 1) {
      const step = nextOomSettings(launch, plan.hardware.computeCapability)
      if (!('settings' in step)) throw new Error('expected a rung')
      launch = step.settings
      rungs.push(planForLaunch(plan, launch, step.changes, hostCpu))
    }
    expect(rungs.map((copy) => [copy.settings.microBatch, copy.settings.gradAccum])).toEqual([
      [4, 4],
      [2, 8],
      [1, 16],
    ])
    const [four, two] = rungs as [TrainingPlan, TrainingPlan, TrainingPlan]
    expect(four.memory.perDevice.total).toBeLessThan(plan.memory.perDevice.total)
    for (const [bigger, smaller] of [
      [four, two],
      [two, rungs[2] as TrainingPlan],
    ] as const) {
      expect(smaller.memory.perDevice.total).toBeLessThan(bigger.memory.perDevice.total)
      expect(smaller.memory.usedFraction).toBeLessThan(bigger.memory.usedFraction)
      // Activations and logits scale with the micro-batch; the training state does not.
      expect(smaller.memory.perDevice.activations).toBeCloseTo(bigger.memory.perDevice.activations / 2, -1)
      expect(smaller.memory.perDevice.weights).toBe(bigger.memory.perDevice.weights)
      expect(smaller.memory.perDevice.optimizer).toBe(bigger.memory.perDevice.optimizer)
    }
    for (const copy of rungs) {
      expectConsistent(copy)
      expect(copy.settings.effectiveBatch).toBe(16)
      expect(copy.memory.perDevice.cudaContext).toBe(plan.memory.perDevice.cudaContext)
      // Smaller micro-batches use the GPU less well, never better than the plan.
      expect(copy.throughput.tokensPerSecond).toBeLessThan(plan.throughput.tokensPerSecond)
      expect(copy.throughput.tokensPerSecond).toBeGreaterThan(plan.throughput.tokensPerSecond * 0.5)
    }
    const last = four.warnings.at(-1)
    expect(four.warnings.map((w) => w.source)).toEqual(['rigfit monitor', 'rigfit monitor'])
    expect(last?.id).toBe('monitor-reestimate')
    expect(last?.message).toMatch(
      /^memory and speed re-estimated for micro-batch 8 → 4, gradient accumulation 2 → 4: \d+\.\d GiB per device \(plan: 14\.4 GiB\), \d+ tokens\/s \(plan: 152000\)$/,
    )
    expect(JSON.stringify(rungs)).not.toMatch(/not recomputed/)
  })

  it('re-estimates less memory and a slower step once gradient checkpointing is on', () => {
    const one = { ...settings, microBatch: 1, gradAccum: 16 }
    const step = nextOomSettings(one, plan.hardware.computeCapability)
    if (!('settings' in step)) throw new Error('expected a rung')
    expect(step.settings.gradCheckpointing).toBe(true)
    const without = copyAt(one)
    const withCheckpointing = planForLaunch(plan, step.settings, step.changes, hostCpu)
    expectConsistent(withCheckpointing)
    expect(withCheckpointing.memory.perDevice.activations).toBeLessThan(without.memory.perDevice.activations)
    expect(withCheckpointing.memory.perDevice.total).toBeLessThan(without.memory.perDevice.total)
    // Recomputing the forward pass costs about a third more work per step.
    expect(withCheckpointing.throughput.tokensPerSecond).toBeLessThan(without.throughput.tokensPerSecond)
    expect(withCheckpointing.time.totalHours).toBeGreaterThan(without.time.totalHours)
    expect(withCheckpointing.warnings.at(-1)?.message).toMatch(/gradient checkpointing on/)
  })

  it('says which rate a precision change assumes', () => {
    const fp32Plan = TrainingPlan.parse({ ...plan, settings: { ...plan.settings, precision: 'fp32' } })
    const launch = {
      ...settings,
      microBatch: 1,
      gradAccum: 16,
      gradCheckpointing: true,
      precision: 'fp32' as const,
    }
    const step = nextOomSettings(launch, plan.hardware.computeCapability)
    if (!('settings' in step)) throw new Error('expected a rung')
    const mixed = copyAt(step.settings, fp32Plan)
    const stillFp32 = copyAt(launch, fp32Plan)
    expectConsistent(mixed)
    expect(mixed.settings.precision).toBe('bf16-mixed')
    expect(mixed.memory.perDevice.activations).toBeLessThan(stillFp32.memory.perDevice.activations)
    expect(mixed.warnings.at(-1)?.message).toMatch(
      /precision fp32 → bf16-mixed.*matrix rate the plan implies for fp32/,
    )
  })

  it("re-estimates a CPU failover on this machine's CPU, without a CUDA context, in host memory", () => {
    const cpu = replanForGpus(settings, 0)
    const next = planForLaunch(plan, cpu.settings, cpu.changes, hostCpu)
    expect(next.settings).toMatchObject({
      device: 'cpu',
      gpus: 0,
      strategy: 'cpu',
      precision: 'fp32',
      tf32: false,
      sharding: 'none',
    })
    expectConsistent(next)
    expect(next.hardware).toMatchObject({
      gpus: 0,
      gpuName: null,
      computeCapability: null,
      deviceMemoryBytes: plan.hardware.hostMemoryBytes,
    })
    expect(next.hardware.summary).toMatch(/^CPU \(AMD Ryzen 9 7950X 16-Core Processor\)/)
    expect(next.memory.capacityBytes).toBe(plan.hardware.hostMemoryBytes)
    expect(next.memory.perDevice.cudaContext).toBe(0)
    expect(next.memory.perDevice.total).toBe(next.memory.perDevice.reserved)
    // 16 Zen 4 cores at 5.88 GHz with AVX-512 are some 6 TFLOPS fp32: far below the GPU.
    expect(next.throughput.tokensPerSecond).toBeLessThan(plan.throughput.tokensPerSecond / 20)
    expect(next.throughput.tokensPerSecond).toBeGreaterThan(0)
    // The 7950X package (16 cores, 160 W as the planner counts it) at the balanced mode's 70% of its TDP.
    expect(next.power.watts).toBe(112)
    expect(next.power.psuHeadroomWatts).toBeNull()
    expect(next.warnings.at(-1)?.message).toMatch(
      /re-estimated for 1 GPU → the CPU, precision bf16-mixed → fp32: .*memory bandwidth \(20 GB\/s\) is assumed; power at 70% of the CPU package's TDP$/,
    )
  })

  it('on fewer GPUs re-estimates the per-device memory, the lower total speed and the lower draw', () => {
    // Two RTX 4090s (450 W) at 70% of TDP beside a 16-core CPU feeding them (30% of 160 W), with a 1600 W PSU.
    const dual = TrainingPlan.parse({
      ...plan,
      hardware: { ...plan.hardware, gpus: 2 },
      settings: { ...plan.settings, gpus: 2, microBatch: 4, gradAccum: 2, strategy: 'ddp', backend: 'nccl' },
      throughput: { ...plan.throughput, tokensPerSecond: 2 * plan.throughput.tokensPerSecond },
      power: { watts: 678, tdpFraction: 678 / 1060, energyKWh: 678 * 4.55e-3, psuHeadroomWatts: 490 },
    })
    const dualLaunch = { ...settings, gpus: 2, microBatch: 4, gradAccum: 2 }
    const single = replanForGpus(dualLaunch, 1)
    const next = planForLaunch(dual, single.settings, single.changes, hostCpu)
    expectConsistent(next)
    expect(next.settings).toMatchObject({ gpus: 1, strategy: 'single', gradAccum: 4, effectiveBatch: 16 })
    // The same micro-batch on one GPU: no DDP gradient buckets, otherwise the same bytes.
    const onTwo = copyAt({ ...dualLaunch, gradAccum: 4, effectiveBatch: 32 }, dual)
    expect(next.memory.perDevice.weights).toBe(onTwo.memory.perDevice.weights)
    expect(next.memory.perDevice.total).toBeLessThan(onTwo.memory.perDevice.total)
    expect(next.throughput.tokensPerSecond).toBeLessThan(dual.throughput.tokensPerSecond * 0.6)
    expect(next.throughput.tokensPerSecondPerDevice).toBeGreaterThan(dual.throughput.tokensPerSecondPerDevice)
    expect(next.power.watts).toBe(315 + 48)
    expect(next.power.tdpFraction).toBeCloseTo(363 / 610, 9)
    expect(next.power.psuHeadroomWatts).toBe(490 + 450)
    expect(next.warnings.at(-1)?.message).toMatch(
      /^memory and speed re-estimated for 2 GPUs → 1 GPU, gradient accumulation 2 → 4: /,
    )

    // Figures that do not split into a CPU part and equal GPU parts keep the plan's draw, and say so.
    const unsplittable = TrainingPlan.parse({ ...dual, power: plan.power })
    const kept = planForLaunch(unsplittable, single.settings, single.changes, hostCpu)
    expectConsistent(kept)
    expect(kept.power.watts).toBe(plan.power.watts)
    expect(kept.warnings.at(-1)?.message).toMatch(/the power draw is the plan’s/)
  })

  it('re-estimates memory but keeps the speed of a plan whose speed figures cannot calibrate a device', () => {
    const still = TrainingPlan.parse({ ...plan, throughput: { ...plan.throughput, mfu: 0 } })
    const next = copyAt({ ...settings, microBatch: 4, gradAccum: 4 }, still)
    expect(next.memory.perDevice.total).toBe(
      copyAt({ ...settings, microBatch: 4, gradAccum: 4 }).memory.perDevice.total,
    )
    expect(next.throughput).toEqual(still.throughput)
    expect(next.warnings.at(-1)?.message).toMatch(
      /speed kept as the plan’s; the plan's throughput .* cannot be re-estimated: both must be above zero$/,
    )
  })

  it('writes the copy atomically into the log directory, one file per attempt', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rigfit-plan-copy-'))
    const path = await writePlanCopy(dir, 2, plan)
    expect(path).toBe(join(dir, 'plan.attempt-2.json'))
    expect(TrainingPlan.parse(JSON.parse(readFileSync(path, 'utf8')))).toEqual(plan)
    expect(readdirSync(dir)).toEqual(['plan.attempt-2.json'])
  })
})
