import type { Command } from '@oclif/core'
import { Flags } from '@oclif/core'
import type { PlanOptions } from '@rigfit/core'
import { calibrationStorePath, readCalibrationStore } from './store.js'

/** `--no-calibration`: predict from the speed model alone, without this machine's calibration store. */
export const calibrationFlags = {
  calibration: Flags.boolean({
    description:
      "Correct speed from this machine's calibration store (what `rigfit calibrate` and supervised runs measured); --no-calibration predicts from the model alone.",
    allowNo: true,
    default: true,
    helpGroup: 'PLANNING',
  }),
}

/**
 * This machine's calibration records for the planner (core corrects from them; it reads no file itself). A line
 * of the store that is not a record is skipped with a warning naming it.
 */
export async function loadCalibration(
  command: Command,
  stack: string | null = null,
): Promise<NonNullable<PlanOptions['calibration']>> {
  const path = calibrationStorePath(command.config.configDir)
  const { records, skipped } = await readCalibrationStore(path)
  for (const line of skipped.slice(0, 3)) command.warn(`calibration store: skipped ${line}`)
  if (skipped.length > 3) command.warn(`calibration store: skipped ${skipped.length - 3} more line(s)`)
  return { records, stack }
}
