import { join } from 'node:path'
import { type Advice, type LaunchSettings, RigfitError, type TrainingPlan } from '@rigfit/core'
import { writeFileSafely } from '@rigfit/core/node'
import { readHostCpuDevice } from '../sampling/host-cpu-device.js'
import { describeChanges, type HostCpuReader, reestimateCopy } from './reestimate-copy.js'

/**
 * The plan a launch runs with: the user's plan with the launch's settings written in. When the settings differ
 * from the plan's, the copy's memory, speed, time and energy are re-estimated for them (reestimateCopy), so the
 * copy stays a consistent plan and the live view compares measured memory with a current prediction.
 */
export function planForLaunch(
  plan: TrainingPlan,
  settings: LaunchSettings,
  notes: string[],
  readHostCpu: HostCpuReader = (memoryBytes) =>
    readHostCpuDevice({ procRoot: '/proc', sysfsRoot: '/sys', memoryBytes }),
): TrainingPlan {
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
    warnings: [
      ...plan.warnings,
      ...notes.map((message, i) => monitorAdvice(`monitor-change-${i + 1}`, message)),
    ],
  }
  if (describeChanges(before, next.settings) === '') return next
  const reestimated = reestimateCopy(plan, next, readHostCpu)
  reestimated.plan.warnings.push(monitorAdvice('monitor-reestimate', reestimated.note))
  return reestimated.plan
}

function monitorAdvice(id: string, message: string): Advice {
  return { id, message, source: 'rigfit monitor', expectedGain: null }
}

/** Writes the plan copy for one attempt next to the run's log; the user's own plan file is never touched. */
export async function writePlanCopy(logDir: string, attempt: number, plan: TrainingPlan): Promise<string> {
  const path = join(logDir, `plan.attempt-${attempt}.json`)
  try {
    // A copy from an earlier run in the same --log-dir is replaced; a link or device in its place is not.
    await writeFileSafely(path, `${JSON.stringify(plan, null, 2)}\n`, { force: true })
  } catch (error) {
    if (error instanceof RigfitError) throw error
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
