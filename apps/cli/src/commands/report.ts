import { Flags, type Interfaces } from '@oclif/core'
import { isRigfitError, MODES, type Mode, type TrainingPlan } from '@rigfit/core'
import type { ReportInput } from '@rigfit/report'
import { RigfitCommand } from '../lib/base-command.js'
import { resolvePlanningTarget } from '../lib/cluster.js'
import { recommendFor } from '../lib/hardware-search.js'
import { instanceFlags, parsePrice, resolvePlanningProfile } from '../lib/instance.js'
import { planningFlags, planOptionsFromFlags } from '../lib/planning-flags.js'
import { profileSourceFlags } from '../lib/profile-source.js'
import { readEstimateFile } from '../lib/report-estimate.js'
import {
  comparedWhatIf,
  machineSummary,
  makePlans,
  readPlans,
  recommendedWhatIf,
} from '../lib/report-plans.js'
import { readRunReport } from '../lib/report-run.js'
import { checkReportTarget, type WrittenReport, writeReport } from '../lib/report-write.js'
import { workloadFlags, workloadFromFlags } from '../lib/workload-flags.js'

export default class Report extends RigfitCommand {
  static override summary =
    'Write one self-contained HTML page with plots: plans, a what-if, an estimate or a run.'
  static override description =
    'Plans (read with --plan, or made here for --mode with the same workload and hardware flags as `rigfit plan`): memory per device by part against the capacity and budget, tokens/s, time, energy and cost, and every setting linked to the rules that decided it. --compare GPU… or --recommend add time and cost per hardware. --run DIR adds the loss, speed, GPU memory against the plan, temperature and power of a `rigfit monitor` run, with its events. --estimate FILE adds a saved `rigfit estimate --json`. The page has no script and fetches nothing: it reads offline, in light and dark, and prints.'
  static override examples = [
    '<%= config.bin %> report --out report.html',
    '<%= config.bin %> report --gpu "RTX 4090" --model llama-3.2-1b --out plans.html',
    '<%= config.bin %> report --plan plan.json --run rigfit-runs/2026-01-01T10-00-00-000Z --out run.html',
    '<%= config.bin %> report --mode balanced --compare "RTX 4090" --compare "A100 80GB" --out what-if.html',
    '<%= config.bin %> report --mode balanced --model llama-3.1-8b --time-budget 24h --dataset-size 2GB --recommend --out where.html',
  ]
  static override flags = {
    out: Flags.string({ description: 'The HTML file to write.', helpValue: 'FILE', required: true }),
    force: Flags.boolean({ description: 'Replace the --out file if it exists (a regular file only).' }),
    plan: Flags.string({
      description:
        'A plan written by `rigfit plan --json` or `rigfit export`; repeat for several side by side.',
      helpValue: 'FILE',
      multiple: true,
      exclusive: ['mode', 'compare', 'recommend'],
    }),
    mode: Flags.string({
      description: 'Plan these modes here (default: all three when no --plan, --run or --estimate is given).',
      options: [...MODES],
      multiple: true,
    }),
    compare: Flags.string({
      description:
        'What-if: plan the first --mode on each of these catalog GPUs (with --gpus of them); chart time and cost.',
      helpValue: 'GPU',
      multiple: true,
      exclusive: ['recommend'],
    }),
    recommend: Flags.boolean({
      description:
        'What-if: rank catalog GPUs and cloud presets for the workload within --time-budget, as `rigfit plan --recommend`.',
    }),
    run: Flags.string({
      description: 'The folder of a `rigfit monitor` run (its monitor.jsonl).',
      helpValue: 'DIR',
    }),
    estimate: Flags.string({ description: 'A saved `rigfit estimate --json`.', helpValue: 'FILE' }),
    ...profileSourceFlags,
    ...instanceFlags,
    ...workloadFlags,
    ...planningFlags,
  }

  async run(): Promise<WrittenReport> {
    const { flags } = await this.parse(Report)
    await checkReportTarget(flags.out, flags.force)
    // Everything is read and planned before the page is written: a problem leaves no file behind.
    const input: ReportInput = { createdAt: new Date().toISOString(), rigfitVersion: this.config.version }
    const planning = flags.mode !== undefined || flags.compare !== undefined || flags.recommend
    if (flags.plan) input.plans = await readPlans(flags.plan)
    else if (planning || (flags.run === undefined && flags.estimate === undefined))
      await this.plan(flags, input)
    if (flags.estimate) input.estimate = await readEstimateFile(flags.estimate)
    if (flags.run) input.run = await readRunReport(flags.run)
    const written = await writeReport(flags.out, input, flags.force)
    if (!this.jsonEnabled()) this.log(`Report (${written.kinds.join(', ')}) written to ${written.written}`)
    return written
  }

  private async plan(
    flags: Interfaces.InferredFlags<typeof Report.flags>,
    input: ReportInput,
  ): Promise<void> {
    const modes = (flags.mode ?? [...MODES]) as Mode[]
    const options = planOptionsFromFlags(flags)
    const asked = await workloadFromFlags(flags, this.config.cacheDir)
    const { profile, cluster } = await resolvePlanningTarget(this, flags)
    const workload = cluster ? { ...asked, nodes: cluster.nodes } : asked
    input.machine = machineSummary(profile)
    input.plans = await makePlans(this, profile, workload, modes, {
      ...options,
      notices: cluster?.advice ?? [],
    })
    const first = modes[0] as Mode
    if (flags.recommend) {
      const ranking = await recommendFor(this, workload, first, options, parsePrice(flags['price-per-hour']))
      input.whatIf = recommendedWhatIf(ranking)
    }
    if (flags.compare) {
      const results: { gpu: string; plan: TrainingPlan | null; reason: string | null }[] = []
      for (const gpu of flags.compare) {
        const candidate = await resolvePlanningProfile(this, { ...flags, gpu, instance: undefined })
        try {
          const [planned] = await makePlans(this, candidate, workload, [first], options)
          results.push({ gpu, plan: planned?.plan ?? null, reason: null })
        } catch (error) {
          if (!isRigfitError(error) || error.kind !== 'fit') throw error
          results.push({ gpu, plan: null, reason: error.message })
        }
      }
      input.whatIf = comparedWhatIf(first, results)
    }
  }
}
