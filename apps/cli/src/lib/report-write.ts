import { resolve } from 'node:path'
import { Flags } from '@oclif/core'
import { isRigfitError, RigfitError } from '@rigfit/core'
import { assertReplaceable, writeFileSafely } from '@rigfit/core/node'
import type { ReportInput, ReportKind } from '@rigfit/report'

/** `--report FILE` of `estimate` and `monitor`: the same page `rigfit report` writes, with `--force` to replace it. */
export const reportFlag = Flags.string({
  description:
    'Also write an HTML report (one self-contained page with plots) to this file; an existing one is replaced only with --force.',
  helpValue: 'FILE',
})

export interface WrittenReport {
  /** The file written. */
  written: string
  kinds: ReportKind[]
  bytes: number
}

/** Fails before any work is done when the page could not be written: an existing file without --force, a folder, a link. */
export async function checkReportTarget(path: string, force: boolean): Promise<void> {
  await assertReplaceable(path, force)
}

/** Renders the page and writes it whole or not at all (a temporary file renamed into place). */
export async function writeReport(path: string, input: ReportInput, force: boolean): Promise<WrittenReport> {
  // Loaded only when a page is written: the charting stack would otherwise slow every estimate and monitor start.
  const { renderReport, reportKinds } = await import('@rigfit/report')
  const html = await renderReport(input)
  try {
    await writeFileSafely(path, html, { force })
  } catch (error) {
    if (isRigfitError(error)) throw error
    throw new RigfitError(
      'io',
      'E_WRITE',
      `cannot write the report to ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      {
        suggestion: 'Check that the folder exists and is writable, or choose another --out file.',
        cause: error,
      },
    )
  }
  return { written: resolve(path), kinds: reportKinds(input), bytes: Buffer.byteLength(html) }
}
