import { Flags } from '@oclif/core'
import { printable, printableLine, RIGFIT_VERSION } from '@rigfit/core'
import { buildProfile, collectProbes, formatProfileSummary, type RawProbeOutput } from '@rigfit/profiler'
import { RigfitCommand } from '../lib/base-command.js'
import { loadAllCatalogEntries } from '../lib/catalog.js'

const PREVIEW_LINES = 40

export default class Doctor extends RigfitCommand {
  static override description =
    "Print every hardware probe's raw output and timing, for bug reports: what each tool printed, which files were read, what failed and why."

  static override examples = [
    '<%= config.bin %> doctor',
    '<%= config.bin %> doctor --full > rigfit-doctor.txt',
    '<%= config.bin %> doctor --json',
  ]

  static override flags = {
    full: Flags.boolean({
      description: `Print whole outputs (default: the first ${PREVIEW_LINES} lines of each).`,
      default: false,
    }),
    timeout: Flags.integer({
      description: 'Deadline of each probe in milliseconds.',
      default: 2000,
      min: 100,
      max: 60_000,
    }),
  }

  async run(): Promise<Record<string, unknown>> {
    const { flags } = await this.parse(Doctor)
    const started = performance.now()
    const collection = await collectProbes({ timeoutMs: flags.timeout })
    const profile = buildProfile(collection, { catalog: await loadAllCatalogEntries(this) })
    const environment = {
      rigfitVersion: RIGFIT_VERSION,
      node: process.version,
      platform: process.platform,
      arch: process.arch,
      path: process.env.PATH ?? '',
      totalMs: Math.round(performance.now() - started),
    }
    if (!this.jsonEnabled()) {
      this.log(
        `rigfit ${environment.rigfitVersion} · Node ${environment.node} · ${environment.platform}/${environment.arch} · ${environment.totalMs} ms in all`,
      )
      this.log('\nProbes:')
      for (const probe of collection.records) {
        const mark = probe.ok ? 'ok  ' : probe.absent ? 'n/a ' : 'FAIL'
        this.log(
          `  ${mark} ${probe.name.padEnd(26)} ${String(probe.ms).padStart(8)} ms${probe.error ? `  ${printableLine(probe.error)}` : ''}`,
        )
      }
      for (const raw of collection.raw) this.log(renderRaw(raw, flags.full))
      this.log('\nResulting profile:')
      this.writeOut(formatProfileSummary(profile))
    }
    return { environment, probes: collection.records, raw: collection.raw, profile }
  }
}

function renderRaw(raw: RawProbeOutput, full: boolean): string {
  const status = raw.exitCode === null ? (raw.ok ? 'read' : 'failed') : `exit ${raw.exitCode}`
  const lines = [`\n── ${raw.probe}: ${raw.source} (${status}, ${raw.ms} ms)`]
  const show = (label: string, text: string) => {
    if (!text.trim()) return
    // trimEnd, not /\s+$/: the pattern is quadratic on a long run of blanks in a tool's output.
    const all = text.trimEnd().split('\n')
    const shown = full ? all : all.slice(0, PREVIEW_LINES)
    // A tool's own colours and escapes are shown, not obeyed: the report is of what it printed.
    lines.push(`${label}:`, ...shown.map((line) => `  ${printable(line)}`))
    if (shown.length < all.length)
      lines.push(`  … ${all.length - shown.length} more lines (--full shows them)`)
  }
  show('stdout', raw.stdout)
  show('stderr', raw.stderr)
  if (!raw.stdout.trim() && !raw.stderr.trim()) lines.push('  (no output)')
  return lines.join('\n')
}
