import { join } from 'node:path'
import type { Mode, TrainingPlan } from '@rigfit/core'
import { type ExportFile, exportPlan, writeExportFiles } from '@rigfit/exporters'

/** The trainer configs `analyze --generate-configs` writes for each plan, beside the plan itself. */
const GENERATED_FORMATS = ['rigfit', 'hf', 'accelerate', 'pytorch'] as const

/**
 * Writes every plan's configs into <out>/<mode>/, all or nothing: every format is rendered and checked first,
 * then the files are written atomically; existing files are kept unless `force`.
 */
export async function writeGeneratedConfigs(
  plans: Partial<Record<Mode, TrainingPlan>>,
  outDir: string,
  force: boolean,
): Promise<string[]> {
  const files: ExportFile[] = []
  for (const [mode, plan] of Object.entries(plans) as [Mode, TrainingPlan][]) {
    for (const format of GENERATED_FORMATS) {
      const formats = plan.settings.device === 'cpu' && format === 'accelerate' ? [] : [format]
      for (const name of formats) {
        for (const file of exportPlan(plan, { format: name }).files)
          files.push({ ...file, path: join(mode, file.path) })
      }
    }
  }
  // Formats that share a file (the plan JSON) write it once.
  const unique = [...new Map(files.map((file) => [file.path, file])).values()]
  return writeExportFiles(outDir, unique, { force })
}
