import { join } from 'node:path'
import { type Advice, type LaunchSettings, RigfitError, type TrainingPlan } from '@rigfit/core'
import { writeFileAtomic } from './atomic-write.js'

/**
 * The plan a launch runs with: the user's plan with the launch's settings written in. The memory prediction
 * follows micro-batch changes (activations and logits scale with the batch); for the other changes the
 * prediction is left as it was and a warning in the copy says so.
 */
export function planForLaunch(plan: TrainingPlan, settings: LaunchSettings, notes: string[]): TrainingPlan {
  const before = plan.settings
  const gpusChanged = settings.gpus !== before.gpus
  const strategy =
    settings.gpus === 0
      ? 'cpu'
      : settings.gpus === 1 && gpusChanged && before.strategy === 'ddp'
        ? 'single'
        : before.strategy
  const next: TrainingPlan = {
    ...plan,
    hardware: { ...plan.hardware, gpus: settings.gpus },
    settings: {
      ...before,
      device: settings.device,
      gpus: settings.gpus,
      microBatch: settings.microBatch,
      gradAccum: settings.gradAccum,
      effectiveBatch: settings.effectiveBatch,
      gradCheckpointing: settings.gradCheckpointing,
      precision: settings.precision ?? before.precision,
      strategy,
      ...(settings.gpus === 0
        ? {
            backend: 'none' as const,
            sharding: 'none' as const,
            offload: 'none' as const,
            attention: before.attention === 'flash' ? ('sdpa' as const) : before.attention,
            tf32: false,
            cudnnBenchmark: false,
            dataloader: { ...before.dataloader, pinMemory: false },
          }
        : {}),
    },
    memory: scaleMemoryForMicroBatch(plan.memory, before.microBatch, settings.microBatch),
    warnings: [...plan.warnings, ...notes.map((message, i) => monitorAdvice(message, i))],
  }
  const unmodelled: string[] = []
  if (settings.gradCheckpointing !== before.gradCheckpointing) unmodelled.push('gradient checkpointing')
  if (settings.precision !== null && settings.precision !== before.precision) unmodelled.push('precision')
  if (gpusChanged) unmodelled.push('device count')
  if (unmodelled.length > 0) {
    next.warnings.push(
      monitorAdvice(
        `memory and speed figures were not recomputed for the changed ${unmodelled.join(', ')}; run \`rigfit plan\` for new predictions`,
        notes.length,
      ),
    )
  }
  return next
}

function monitorAdvice(message: string, index: number): Advice {
  return { id: `monitor-change-${index + 1}`, message, source: 'rigfit monitor', expectedGain: null }
}

function scaleMemoryForMicroBatch(
  memory: TrainingPlan['memory'],
  from: number,
  to: number,
): TrainingPlan['memory'] {
  if (from === to) return memory
  const perDevice = memory.perDevice
  const ratio = to / from
  const scaled = (value: number) => Math.round(value * ratio)
  const activations = scaled(perDevice.activations)
  const logits = scaled(perDevice.logits)
  const saved = perDevice.activations + perDevice.logits - activations - logits
  const less = (value: number) => Math.max(0, value - saved)
  const total = less(perDevice.total)
  return {
    ...memory,
    perDevice: {
      ...perDevice,
      activations,
      logits,
      peakAllocated: less(perDevice.peakAllocated),
      reserved: less(perDevice.reserved),
      total,
    },
    usedFraction: memory.capacityBytes > 0 ? total / memory.capacityBytes : memory.usedFraction,
  }
}

/** Writes the plan copy for one attempt next to the run's log; the user's own plan file is never touched. */
export async function writePlanCopy(logDir: string, attempt: number, plan: TrainingPlan): Promise<string> {
  const path = join(logDir, `plan.attempt-${attempt}.json`)
  try {
    await writeFileAtomic(path, `${JSON.stringify(plan, null, 2)}\n`)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new RigfitError(
      'io',
      'E_PLAN_COPY_WRITE',
      `cannot write the plan copy ${path}: ${code ?? (error as Error).message}`,
      {
        suggestion: 'Free some space or pass a writable --log-dir.',
      },
    )
  }
  return path
}
