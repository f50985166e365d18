import { RigfitError } from '../errors.js'
import { PIN_FLAGS, type PinName, pinEntries, pinText, withoutPin } from '../plan/pins.js'
import type { Mode } from '../schemas/common.js'
import type { HardwareProfile } from '../schemas/hardware-profile.js'
import type { Advice, TrainingPlan } from '../schemas/training-plan.js'
import type { Workload } from '../schemas/workload.js'
import { planMode, type SearchPlanOptions } from './plan-mode.js'
import type { HardwareSearch } from './recommend.js'

/** One change that makes the plan fit, with the plan it gives. */
export interface FitAlternative {
  /** What changes, in words: "QLoRA (4-bit base)". */
  change: string
  /** The flags that make it: "--method qlora". */
  flags: string
  /** Per-device memory the plan predicts, and the device's capacity. */
  predictedBytes: number
  capacityBytes: number
  plan: TrainingPlan
}

interface Trial {
  /** Trials of one group answer one question (how much shorter a sequence): the first that fits is enough. */
  group?: string
  change: string
  flags: string
  profile?: HardwareProfile
  workload?: Workload
  options?: Partial<SearchPlanOptions>
}

/** The hardware search, and the warnings every plan of it carries: the rule packs that were skipped. */
export interface FitSearch extends HardwareSearch {
  packNotices: Advice[]
}

const GIB = 2 ** 30

/**
 * The smallest changes that would make a plan fit when none does, each with its predicted memory, nearest first:
 * a pin dropped, QLoRA, checkpointing, 8-bit optimizer states, a shorter sequence, more of the memory, more GPUs,
 * a larger GPU. Each is planned for real (packs decided again), so the plan shown is the one the changed command
 * prints.
 */
export async function fitAlternatives(
  search: FitSearch,
  profile: HardwareProfile,
  workload: Workload,
  mode: Mode,
  options: SearchPlanOptions,
): Promise<FitAlternative[]> {
  const trials = [...pinTrials(workload), ...leverTrials(workload, profile, options)]
  trials.push(...hardwareTrials(profile, search))
  const found: FitAlternative[] = []
  const answered = new Set<string>()
  for (const trial of trials) {
    if (trial.group && answered.has(trial.group)) continue
    const plan = await planTrial(search, trial, { profile, workload, mode, options })
    if (!plan) continue
    if (trial.group) answered.add(trial.group)
    found.push({
      change: trial.change,
      flags: trial.flags,
      predictedBytes: plan.memory.perDevice.total,
      capacityBytes: plan.memory.capacityBytes,
      plan,
    })
  }
  return found
}

/** The trial planned as the changed command plans it, or null when it does not fit either. */
async function planTrial(
  search: FitSearch,
  trial: Trial,
  asked: { profile: HardwareProfile; workload: Workload; mode: Mode; options: SearchPlanOptions },
): Promise<TrainingPlan | null> {
  const profile = trial.profile ?? asked.profile
  try {
    return await planMode({
      packs: search.packs,
      profile,
      workload: trial.workload ?? asked.workload,
      mode: asked.mode,
      options: { ...asked.options, ...trial.options },
      notices: [...search.packNotices, ...search.hardware.assumptions(profile)],
    })
  } catch {
    // A change that cannot be planned at all (not only one that does not fit) is simply not an alternative.
    return null
  }
}

/** The fit error, carrying what would fit: its suggestion lists the changes, its details the nearest plan. */
export function explainedFitError(error: RigfitError, alternatives: FitAlternative[]): RigfitError {
  if (alternatives.length === 0) return error
  const lines = alternatives.map(
    (alternative) =>
      `${alternative.flags}: ${alternative.change}, ${gib(alternative.predictedBytes)} of ${gib(alternative.capacityBytes)} GiB per device`,
  )
  // The planner's details (the binding constraint, what was tried) stay; the alternatives join them.
  const planner = typeof error.details === 'object' && error.details !== null ? error.details : {}
  return new RigfitError(error.kind, error.code, error.message, {
    suggestion: `These changes fit:\n  ${lines.join('\n  ')}`,
    details: {
      ...planner,
      alternatives: alternatives.map(({ plan: _plan, ...rest }) => rest),
      nearestPlan: alternatives[0]?.plan ?? null,
    },
  })
}

function pinTrials(workload: Workload): Trial[] {
  // A pinned --no-grad-ckpt or AdamW is better answered by the lever itself (leverTrials).
  return pinEntries(workload.pins)
    .filter(([name]) => name !== 'loraTargets' || workload.pins?.loraRank === undefined)
    .filter(([name, value]) => !(name === 'gradCheckpointing' && value === false))
    .filter(([name, value]) => !(name === 'optimizer' && value === 'adamw'))
    .map(([name, value]) => ({
      change: `without the pinned ${pinLabel(name)}`,
      flags: `drop ${pinText(name, value)}`,
      workload: withoutPin(workload, name),
    }))
}

function leverTrials(workload: Workload, profile: HardwareProfile, options: SearchPlanOptions): Trial[] {
  const trials: Trial[] = []
  const pins = workload.pins ?? {}
  const cuda = profile.gpus.some((gpu) => gpu.vendor === 'nvidia')
  if (workload.kind === 'finetune' && workload.method !== 'qlora' && cuda && pins.quant === undefined) {
    trials.push({
      change: 'QLoRA: adapters on a 4-bit NF4 base',
      flags: '--method qlora',
      workload: { ...workload, method: 'qlora' },
    })
  }
  if (pins.gradCheckpointing === false) {
    trials.push({
      change: 'recompute activations in backward',
      flags: '--grad-ckpt',
      workload: { ...workload, pins: { ...pins, gradCheckpointing: true } },
    })
  }
  if (cuda && pins.optimizer === 'adamw' && pins.sharding === undefined) {
    trials.push({
      change: '8-bit optimizer states (bitsandbytes)',
      flags: '--optimizer adamw-8bit',
      workload: { ...workload, pins: { ...pins, optimizer: 'adamw-8bit' } },
    })
  }
  for (const seq of workload.seq ? [workload.seq / 2, workload.seq / 4] : []) {
    if (seq >= 128 && Number.isInteger(seq)) {
      trials.push({
        group: 'seq',
        change: `sequences of ${seq} tokens`,
        flags: `--seq ${seq}`,
        workload: { ...workload, seq },
      })
    }
  }
  if ((options.targetUtilization ?? 0) < 0.95) {
    trials.push({
      change: '95% of device memory (the extreme mode spends as much)',
      flags: '--target-util 0.95',
      options: { targetUtilization: 0.95 },
    })
  }
  return trials
}

/** More GPUs of the same kind, then the smallest larger GPU of the same vendor in the catalog. */
function hardwareTrials(profile: HardwareProfile, { catalog, hardware }: HardwareSearch): Trial[] {
  const gpu = profile.gpus[0]
  // A Mac's memory is its chip's: no more of them train together, and a larger one is another Mac.
  if (!gpu || gpu.integrated || gpu.vendor === 'apple') return []
  const count = profile.gpus.length
  // The printed command keeps the user's other flags: a RAM or CPU count they gave stays, an assumed one is
  // assumed again for the new GPUs, as the command run with those flags would (WhatIfHardware.otherGpus).
  const trials: Trial[] = [2, 4, 8]
    .map((factor) => count * factor)
    .filter((gpus) => gpus <= 8)
    .map((gpus) => ({
      group: 'hardware',
      change: `${gpus} x ${gpu.name}`,
      flags: `--gpu "${gpu.name}" --gpus ${gpus}`,
      profile: hardware.otherGpus(profile, { gpus }),
    }))
  const larger = catalog
    .filter((entry) => entry.vendor === gpu.vendor && entry.vramGB * GIB > gpu.vramTotalBytes * 1.2)
    .sort((a, b) => a.vramGB - b.vramGB)
    .slice(0, 3)
  for (const entry of larger) {
    trials.push({
      group: 'hardware',
      change: `${entry.name} (${entry.vramGB} GB)`,
      flags: `--gpu "${entry.name}" --gpus ${count}`,
      profile: hardware.otherGpus(profile, { gpu: entry, gpus: count }),
    })
  }
  return trials
}

function pinLabel(name: PinName): string {
  return PIN_FLAGS[name].replace(/^--/, '').replace(/-/g, ' ')
}

function gib(bytes: number): string {
  return (bytes / GIB).toFixed(1)
}
