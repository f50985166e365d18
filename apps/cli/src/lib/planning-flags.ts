import { Flags } from '@oclif/core'
import { DEFAULT_STACK, parseStackRef, RigfitError, type StackRef } from '@rigfit/core'
import { calibrationFlags } from './calibration/calibration-flags.js'
import { type InstanceFlagValues, pricePerHour } from './instance.js'
import { requireRulesPath } from './packs.js'
import type { PlanModesOptions } from './planning.js'

/** Flags that tune how plans are made, shared by `analyze` and `plan`. */
export const planningFlags = {
  'psu-watts': Flags.integer({
    description: 'Power supply rating in watts, for headroom warnings.',
    min: 50,
    helpGroup: 'PLANNING',
  }),
  'base-batch': Flags.integer({
    description:
      'Per-GPU batch wanted (elastic setups): effective batch = base x GPUs x nodes, accumulation makes up what does not fit.',
    min: 1,
    helpGroup: 'PLANNING',
  }),
  'target-util': Flags.string({
    description: 'Share of device memory to use, 0.05-1, overriding the mode (e.g. 0.75).',
    helpGroup: 'PLANNING',
  }),
  rules: Flags.string({
    description:
      'Also load the community rule packs at this path (a pack folder, a single-file pack, or a folder of packs).',
    helpGroup: 'PLANNING',
    helpValue: 'PATH',
  }),
  ...calibrationFlags,
  stack: Flags.string({
    description:
      "The framework that will run the plan: hf, litgpt, torchtune, torchtitan, nemo or plain, optionally @VERSION; the plan records it and estimates as it runs (logits upcast, adapter type). Default: export's --format decides (hf, accelerate, deepspeed: hf; torchrun, slurm, lightning, hydra, kconfig, pytorch, rigfit: plain), else hf.",
    helpGroup: 'PLANNING',
    helpValue: 'NAME[@VERSION]',
  }),
}

export function parseTargetUtil(text: string | undefined): number | null {
  if (text === undefined) return null
  const value = Number(text)
  if (!Number.isFinite(value) || value < 0.05 || value > 1) {
    throw new RigfitError(
      'usage',
      'E_BAD_TARGET_UTIL',
      `--target-util "${text}" must be a number between 0.05 and 1.`,
      {
        suggestion: 'Pass a share such as 0.75 for 75% of device memory.',
      },
    )
  }
  return value
}

export interface PlanningFlagValues extends InstanceFlagValues {
  'psu-watts'?: number | undefined
  'base-batch'?: number | undefined
  'target-util'?: string | undefined
  rules?: string | undefined
  calibration?: boolean | undefined
  stack?: string | undefined
}

/**
 * The planning options of `plan`, `analyze` and `export`, every value checked at the door, before the machine is
 * profiled or anything is planned or written: a bad price, share or rules path is a usage or input error that
 * names the flag, never a plan followed by a failure.
 */
export function planOptionsFromFlags(
  flags: PlanningFlagValues,
  fallbackStack: StackRef = DEFAULT_STACK,
): PlanModesOptions {
  return {
    stack: flags.stack === undefined ? fallbackStack : parseStackRef(flags.stack),
    psuWatts: flags['psu-watts'] ?? null,
    baseBatch: flags['base-batch'] ?? null,
    targetUtilization: parseTargetUtil(flags['target-util']),
    rulesDir: flags.rules === undefined ? undefined : requireRulesPath(flags.rules),
    pricePerHour: pricePerHour(flags),
    createdAt: new Date().toISOString(),
    useCalibration: flags.calibration !== false,
  }
}
