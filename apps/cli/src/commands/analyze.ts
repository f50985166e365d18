import { Flags } from '@oclif/core'
import { explainedFitError, MODES, type Mode, performanceScore } from '@rigfit/core'
import { RigfitCommand } from '../lib/base-command.js'
import { clusterLine, resolvePlanningTarget } from '../lib/cluster.js'
import { fitAlternativesFor } from '../lib/hardware-search.js'
import { inputTimeoutFlags, inputTimeoutMs } from '../lib/input-timeout.js'
import { instanceFlags, resolvePlanningProfile } from '../lib/instance.js'
import { planModes } from '../lib/planning.js'
import { planningFlags, planOptionsFromFlags } from '../lib/planning-flags.js'
import { profileSourceFlags } from '../lib/profile-source.js'
import { collectAdvice, renderAdviceList, renderPlansSideBySide, renderScore } from '../lib/render-plans.js'
import { renderProfileSummary } from '../lib/render-profile.js'
import { workloadFlags, workloadFromFlags } from '../lib/workload-flags.js'

export default class Analyze extends RigfitCommand {
  static override summary =
    'Profile this machine and plan training three ways: conservative, balanced, extreme.'
  static override description =
    'The main job: a hardware summary, a performance score out of 10 with its reasons, the three plans side by side (model, batch, sequence, precision, memory, time, power, energy), suggestions with expected gains, and warnings. Plans for hardware you do not have with --from, --gpu/--gpus or --instance.'
  static override examples = [
    '<%= config.bin %> analyze',
    '<%= config.bin %> analyze --model llama-3.2-1b --time-budget 6h',
    '<%= config.bin %> analyze --gpu "RTX 3060 12GB" --gpus 2 --json',
    '<%= config.bin %> analyze --generate-configs --out ./configs',
  ]
  static override flags = {
    ...inputTimeoutFlags,
    'profile-only': Flags.boolean({ description: 'Print the hardware profile and score, no plans.' }),
    benchmark: Flags.boolean({
      description:
        'Also measure memory bandwidth and disk speed first (about 10 s): sharper CPU speed estimates.',
      exclusive: ['from', 'instance'],
    }),
    'generate-configs': Flags.boolean({
      description: 'Write each plan and its trainer configs (hf, accelerate, deepspeed, torchrun) to --out.',
    }),
    out: Flags.directory({ description: 'Folder for --generate-configs.', default: 'rigfit-configs' }),
    force: Flags.boolean({ description: 'Overwrite files written by an earlier --generate-configs.' }),
    ...profileSourceFlags,
    ...instanceFlags,
    ...workloadFlags,
    ...planningFlags,
  }

  async run(): Promise<unknown> {
    const { flags } = await this.parse(Analyze)
    const options = planOptionsFromFlags(flags)
    const { profile, cluster } = flags.from
      ? await resolvePlanningTarget(this, flags)
      : {
          profile: await resolvePlanningProfile(this, flags, {
            benchmark: flags.benchmark,
            progress: !this.jsonEnabled(),
          }),
          cluster: null,
        }
    const score = performanceScore(profile)
    if (flags['profile-only']) {
      if (!this.jsonEnabled()) this.log([renderProfileSummary(profile), '', renderScore(score)].join('\n'))
      return { profile, score }
    }
    const asked = await workloadFromFlags(flags, this.config.cacheDir)
    const workload = cluster ? { ...asked, nodes: cluster.nodes } : asked
    // Skipped rule packs, an assumed CPU and a cluster's differences are warnings of every plan (planModes), so
    // they are listed here too.
    const { plans, failures } = await planModes(this, profile, workload, MODES, {
      ...options,
      notices: cluster?.advice ?? [],
    })
    const suggestions = collectAdvice(plans, 'suggestions')
    const warnings = [
      ...Object.entries(failures).map(([mode, error]) => ({
        id: 'no-plan-fits',
        message: `${mode}: ${error.message} ${error.suggestion ?? ''}`.trim(),
        expectedGain: null,
        modes: [mode as Mode],
        source: 'generator',
      })),
      ...collectAdvice(plans, 'warnings'),
    ]
    if (Object.keys(plans).length === 0) {
      const failure = failures.balanced ?? failures.conservative ?? failures.extreme
      if (!failure) throw new Error('no plan and no failure')
      throw explainedFitError(failure, await fitAlternativesFor(this, profile, workload, 'balanced', options))
    }
    const written = flags['generate-configs']
      ? // The exporters (and their YAML writer) load only when configs are written.
        await (await import('../lib/generate-configs.js')).writeGeneratedConfigs(
          plans,
          flags.out,
          flags.force,
        )
      : []
    if (!this.jsonEnabled()) {
      this.log(
        [
          'HARDWARE ANALYSIS COMPLETE',
          ...(cluster ? [clusterLine(cluster)] : []),
          renderProfileSummary(profile),
          '',
          renderScore(score),
          '',
          'RECOMMENDED CONFIGURATIONS',
          renderPlansSideBySide(plans),
          '',
          'OPTIMIZATION SUGGESTIONS',
          renderAdviceList(suggestions, MODES.length),
          '',
          'WARNINGS',
          renderAdviceList(warnings, MODES.length),
          ...(written.length > 0
            ? ['', `Wrote ${written.length} files to ${flags.out}:`, ...written.map((file) => `  ${file}`)]
            : []),
          '',
          'Next: `rigfit plan --mode balanced` for one plan in full, `rigfit explain <setting>` for the why.',
        ].join('\n'),
      )
    }
    return { profile, score, plans, suggestions, warnings, ...(written.length > 0 ? { written } : {}) }
  }
}
