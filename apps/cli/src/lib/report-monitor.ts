import type { TrainingPlan } from '@rigfit/core'
import { readRunReport } from './report-run.js'
import { type WrittenReport, writeReport } from './report-write.js'

/** `rigfit monitor --report FILE`: when the run ends, its page (and its plan's), from the log it wrote. */
export async function writeRunReport(
  path: string,
  force: boolean,
  logDir: string,
  plan: TrainingPlan | null,
  rigfitVersion: string,
): Promise<WrittenReport> {
  return writeReport(
    path,
    {
      createdAt: new Date().toISOString(),
      rigfitVersion,
      plans: plan ? [{ label: plan.mode, plan }] : [],
      run: await readRunReport(logDir),
    },
    force,
  )
}
