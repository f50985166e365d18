import type { TrainingPlan } from '../../schemas/training-plan.js'
import { deepSpeedTrainedPrecision } from '../deepspeed-precision.js'
import { planPoint } from './estimate-input.js'
import { reestimator } from './reestimate.js'
import { exporterAdvice, exporterTrace } from './revision-advice.js'

const GIB = 1024 ** 3
const gib = (bytes: number) => `${(bytes / GIB).toFixed(1)} GiB`

/**
 * The plan as DeepSpeed runs it. DeepSpeed's bf16 and fp16 modes keep fp32 master weights and fp32 optimizer
 * states (about 8 bytes a parameter more than pure half), so a pure-half plan that a format runs under DeepSpeed
 * is exported as the mixed variant, with the memory and speed the estimator gives for it and a warning (naming
 * the budget when it no longer fits). Other plans come back unchanged.
 */
export function asDeepSpeedRuns(plan: TrainingPlan): TrainingPlan {
  const s = plan.settings
  const precision = deepSpeedTrainedPrecision(s.precision)
  if (precision === s.precision) return plan
  const variant: TrainingPlan = { ...plan, settings: { ...s, precision } }
  const figures = reestimator(plan, variant)(planPoint(plan))
  const over = figures.fits
    ? ''
    : ` That is over the plan's budget of ${gib(figures.budgetBytes)}: choose a format that honours ${s.precision} (hf, accelerate, torchrun or Lightning without ZeRO) or plan again.`
  const warning = exporterAdvice(
    'deepspeed-pure-half-as-mixed',
    `DeepSpeed's ${precision.slice(0, 4)} mode keeps fp32 master weights and fp32 optimizer states, so this export trains ${s.precision} as ${precision}: ${gib(figures.deviceBytes)} per device instead of the planned ${gib(plan.memory.perDevice.total)}.${over}`,
  )
  return {
    ...variant,
    memory: figures.memory,
    throughput: figures.throughput,
    warnings: [...plan.warnings, warning],
    trace: [
      ...plan.trace,
      exporterTrace(
        'precision',
        precision,
        'deepspeed-pure-half-as-mixed',
        `DeepSpeed keeps fp32 master weights and optimizer states under ${s.precision}`,
        { planned: s.precision, deviceBytes: figures.deviceBytes, budgetBytes: figures.budgetBytes },
      ),
    ],
  }
}
