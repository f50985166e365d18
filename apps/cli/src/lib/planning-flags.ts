import { Flags } from '@oclif/core'
import { RigfitError } from '@rigfit/core'

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
  rules: Flags.directory({
    description: 'Also load the community rule packs in this folder.',
    exists: true,
    helpGroup: 'PLANNING',
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
