import { RigfitError } from '../errors.js'
import type { Mode } from '../schemas/common.js'
import type { Workload } from '../schemas/workload.js'
import { gibText } from '../units.js'
import type { Method } from './candidates.js'
import { pinEntries, pinText } from './pins.js'

/** What bound a plan that does not fit: the JSON `details` of the refusal name it. */
export type BindingConstraint = 'context-length' | 'device-memory' | 'host-ram'

export interface NoFitDetails {
  binding: BindingConstraint
  /** What the search tried, so no suggestion repeats it. */
  tried: { methods: Method[]; seq: number | null; gpus: number; pins: string[] }
  budgetBytes: number | null
  /** The least device memory any setup tried needs (device memory), or host RAM (host RAM); else null. */
  leastNeedBytes: number | null
  hostBudgetBytes: number | null
  maxPositions: number | null
}

/** The refusal when the asked sequence is longer than the model's context: the model's own limit binds. */
export function contextLimitError(workload: Workload, mode: Mode, gpus: number): RigfitError | null {
  const model = workload.model
  if (!model || !workload.seq || model.source === 'generated' || workload.seq <= model.maxPositions)
    return null
  const how =
    model.positions === 'learned'
      ? 'its position table has no rows beyond that'
      : 'rigfit does not plan RoPE scaling beyond it'
  return new RigfitError(
    'fit',
    'E_NO_PLAN_FITS',
    `No ${mode} configuration trains ${model.id} at --seq ${workload.seq}: the model was built for ${model.maxPositions} positions and ${how}. Memory is not the limit.`,
    {
      suggestion: `Use --seq ${model.maxPositions} or less, or a model with a longer context.`,
      details: details(workload, [], gpus, {
        binding: 'context-length',
        budgetBytes: null,
        leastNeedBytes: null,
        hostBudgetBytes: null,
        maxPositions: model.maxPositions,
      }),
    },
  )
}

/** The refusal when setups that fit the device need more host RAM than rigfit may use. */
export function hostRamError(
  message: string,
  workload: Workload,
  methods: Method[],
  gpus: number,
  figures: { budgetBytes: number; hostNeedBytes: number; hostBudgetBytes: number },
): RigfitError {
  return new RigfitError('fit', 'E_NO_PLAN_FITS', message, {
    suggestion:
      'Host RAM is the limit: plan for a machine with more RAM (--ram GiB for a what-if), offload less (--offload optimizer or none), or spread the states over more GPUs (--gpus).',
    details: details(workload, methods, gpus, {
      binding: 'host-ram',
      budgetBytes: figures.budgetBytes,
      leastNeedBytes: figures.hostNeedBytes,
      hostBudgetBytes: figures.hostBudgetBytes,
      maxPositions: workload.model?.maxPositions ?? null,
    }),
  })
}

/**
 * The refusal when device memory binds. Its suggestion offers only changes that were not tried: no QLoRA when
 * QLoRA was searched, no shorter sequence when none was asked (the search already shortened it).
 */
export function deviceMemoryError(
  message: string,
  workload: Workload,
  methods: Method[],
  gpus: number,
  figures: { budgetBytes: number; leastNeedBytes: number | null },
): RigfitError {
  const ideas: string[] = []
  if (workload.seq) ideas.push(`a shorter sequence than --seq ${workload.seq}`)
  if (workload.kind === 'finetune' && !methods.includes('qlora')) ideas.push('QLoRA (--method qlora)')
  if (workload.kind === 'finetune') ideas.push('a smaller model')
  if (gpus < 8) ideas.push('more GPUs (--gpus)')
  ideas.push('a GPU with more memory (--gpu)')
  const tried =
    methods.length > 0
      ? ` (tried: ${methods.join(', ')}${workload.seq ? ` at ${workload.seq} tokens` : ''})`
      : ''
  const need =
    figures.leastNeedBytes !== null
      ? ` The leanest setup tried needs ${gibText(figures.leastNeedBytes)} GiB per device.`
      : ''
  return new RigfitError('fit', 'E_NO_PLAN_FITS', `${message}${need}`, {
    suggestion: `Device memory is the limit${tried}: try ${ideas.join(', ')}.`,
    details: details(workload, methods, gpus, {
      binding: 'device-memory',
      budgetBytes: figures.budgetBytes,
      leastNeedBytes: figures.leastNeedBytes,
      hostBudgetBytes: null,
      maxPositions: workload.model?.maxPositions ?? null,
    }),
  })
}

function details(
  workload: Workload,
  methods: Method[],
  gpus: number,
  rest: Omit<NoFitDetails, 'tried'>,
): NoFitDetails {
  const pins = pinEntries(workload.pins).map(([name, value]) => pinText(name, value))
  return { ...rest, tried: { methods, seq: workload.seq, gpus, pins } }
}
