import type { TrainingPlan } from '../../schemas/training-plan.js'
import { planCheckpoints } from '../checkpoints.js'

export interface RunInput {
  /** Tokens the derived plan trains. */
  tokens: number
  tokensPerSecond: number
  /** Tokens per optimizer step: effective batch x sequence. */
  tokensPerStep: number
  watts: number
}

/**
 * Time, steps, energy and checkpoint cadence of a derived plan, the way the planner fills them: hours at the
 * predicted rate, whole optimizer steps, energy at the plan's draw, and core's checkpoint plan for the new
 * length (checkpoint size, copies kept, dataset cache and free disk are the plan's).
 */
export function runFigures(
  plan: TrainingPlan,
  input: RunInput,
): Pick<TrainingPlan, 'time' | 'power' | 'checkpoints'> {
  const totalHours = input.tokensPerSecond > 0 ? input.tokens / input.tokensPerSecond / 3600 : 0
  const c = plan.checkpoints
  const checkpoints = planCheckpoints({
    totalHours,
    checkpointBytes: c.sizeBytes,
    kept: c.kept,
    datasetCacheBytes: Math.max(0, c.diskNeededBytes - c.sizeBytes * c.kept),
    diskFreeBytes: c.diskFreeBytes,
  })
  return {
    time: { totalHours, steps: input.tokensPerStep > 0 ? Math.ceil(input.tokens / input.tokensPerStep) : 0 },
    power: { ...plan.power, watts: input.watts, energyKWh: (input.watts * totalHours) / 1000 },
    checkpoints,
  }
}
