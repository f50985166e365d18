import { Flags } from '@oclif/core'
import {
  autoHeuristic,
  decide,
  deriveFacts,
  explainedFitError,
  type HardwareProfile,
  HEURISTIC_MODEL_SCALE,
  type HeuristicModel,
  MODES,
  type Mode,
} from '@rigfit/core'
import { RigfitCommand } from '../lib/base-command.js'
import { clusterLine, loadCluster, resolvePlanningTarget } from '../lib/cluster.js'
import { fitAlternativesFor, recommendFor } from '../lib/hardware-search.js'
import { inputTimeoutFlags, inputTimeoutMs } from '../lib/input-timeout.js'
import { instanceFlags, parsePrice, resolvePlanningProfile } from '../lib/instance.js'
import { loadAllPacks } from '../lib/packs.js'
import { planModes } from '../lib/planning.js'
import { planningFlags, planOptionsFromFlags } from '../lib/planning-flags.js'
import { profileSourceFlags } from '../lib/profile-source.js'
import { renderPlan } from '../lib/render-plans.js'
import { renderRecommendations } from '../lib/render-recommendations.js'
import { workloadFlags, workloadFromFlags } from '../lib/workload-flags.js'

export default class Plan extends RigfitCommand {
  static override summary = 'One training plan in full, for this machine or hardware you do not have.'
  static override description =
    'Every setting, the memory breakdown, speed, token budget, time, power and energy, checkpoints, warnings and suggestions, and the trace of rules behind each setting (--json). What-if: --gpu/--gpus, --from a saved profile, or --instance a cloud preset. --recommend ranks GPUs, GPU counts and cloud instances for a workload and time budget.'
  static override examples = [
    '<%= config.bin %> plan --mode balanced',
    '<%= config.bin %> plan --mode extreme --gpu "RTX 3060 12GB" --gpus 2',
    '<%= config.bin %> plan --mode balanced --instance p4d.24xlarge --model llama-3.1-8b',
    '<%= config.bin %> plan --model llama-3.1-8b --time-budget 24h --dataset-size 2GB --recommend',
    '<%= config.bin %> plan --model-type resnet18 --target-batch 512',
    '<%= config.bin %> plan --mode balanced --cluster node-a.json node-b.json',
    '<%= config.bin %> plan --mode balanced --from cluster.json',
  ]
  static override flags = {
    ...inputTimeoutFlags,
    mode: Flags.string({ description: 'Which plan.', options: [...MODES], default: 'balanced' }),
    recommend: Flags.boolean({
      description:
        'Rank catalog GPUs, GPU counts and cloud presets that can run the workload within --time-budget.',
    }),
    cluster: Flags.string({
      description:
        'Plan a multi-node job from saved profiles, one per node (heterogeneous nodes: planned for the weakest).',
      multiple: true,
      exclusive: ['from', 'gpu', 'instance'],
    }),
    'model-type': Flags.string({
      description:
        'A model rigfit does not model layer by layer: plan its batch with the AUTO heuristic (batch tier from 80% of free memory, x model scale).',
      options: Object.keys(HEURISTIC_MODEL_SCALE),
    }),
    ...profileSourceFlags,
    ...instanceFlags,
    ...workloadFlags,
    ...planningFlags,
  }

  async run(): Promise<unknown> {
    const { flags } = await this.parse(Plan)
    const mode = flags.mode as Mode
    const options = planOptionsFromFlags(flags)
    if (flags['model-type']) {
      return this.heuristic(
        flags['model-type'] as HeuristicModel,
        await resolvePlanningProfile(this, flags),
        mode,
        flags['target-batch'],
        options.rulesDir,
      )
    }
    const workload = await workloadFromFlags(flags, this.config.cacheDir)
    if (flags.recommend) {
      // Ranking compares GPU counts, so a given price is per GPU there; presets keep their own list price.
      const ranking = await recommendFor(this, workload, mode, options, parsePrice(flags['price-per-hour']))
      if (!this.jsonEnabled()) this.log(renderRecommendations(ranking, workload))
      return ranking
    }
    const target = flags.cluster
      ? { cluster: await loadCluster(flags.cluster) }
      : await resolvePlanningTarget(this, flags)
    const cluster = target.cluster
    const profile = cluster ? cluster.profile : (target as { profile: HardwareProfile }).profile
    const planned = cluster ? { ...workload, nodes: cluster.nodes } : workload
    const { plans, failures } = await planModes(this, profile, planned, [mode], {
      ...options,
      notices: cluster?.advice ?? [],
    })
    const failure = failures[mode]
    if (failure) {
      // Nothing fits: say the smallest changes that would, and show the nearest of those plans.
      const alternatives = await fitAlternativesFor(this, profile, planned, mode, options)
      const nearest = alternatives[0]
      if (nearest && !this.jsonEnabled()) {
        this.log(`Nothing fits as asked. The nearest plan that fits, with ${nearest.flags}:\n`)
        this.log(renderPlan(nearest.plan))
        this.log('')
      }
      throw explainedFitError(failure, alternatives)
    }
    const plan = plans[mode]
    if (!this.jsonEnabled() && cluster) this.log(clusterLine(cluster))
    if (!this.jsonEnabled() && plan) this.log(renderPlan(plan))
    return plan
  }

  private async heuristic(
    model: HeuristicModel,
    profile: HardwareProfile,
    mode: Mode,
    targetBatch: number | undefined,
    rulesDir: string | undefined,
  ): Promise<unknown> {
    const gpu = profile.gpus.find((candidate) => !candidate.integrated || candidate.unifiedMemory)
    // torch.compile is the rule packs' call, as in a full plan: they know which GPUs it breaks on.
    const { packs } = await loadAllPacks(this, { rulesDir })
    const decided = (await decide(packs, deriveFacts(profile, null, mode))).settings.compile
    const compile = gpu !== undefined && decided?.value === true
    const gpus = gpu ? profile.gpus.filter((candidate) => candidate.name === gpu.name).length : 0
    const freeBytes = gpu ? (gpu.vramFreeBytes ?? gpu.vramUsableBytes) : null
    const target = targetBatch ?? (model === 'gpt2' ? 1024 : model === 'resnet50' ? 256 : 512)
    const result = autoHeuristic({ model, freeBytes, gpus, compile, targetEffectiveBatch: target })
    const output = {
      heuristic: true,
      note: 'AUTO heuristic, not a memory prediction: batch tier from 80% of free device memory, times a per-model scale factor.',
      modelType: model,
      device: gpu ? gpu.name : profile.cpu.brand,
      gpus,
      compile,
      ...result,
    }
    if (!this.jsonEnabled()) {
      this.log(
        `${model} on ${output.device}${gpus > 1 ? ` x ${gpus}` : ''} (heuristic, not a memory prediction)`,
      )
      this.log(`  ${result.explanation}`)
      this.log(
        `  torch.compile: ${compile ? 'on' : 'off'}${gpu && !compile && decided ? ` (${decided.provenance.reason.replace(/\.$/, '')})` : gpu ? '' : ' (CPU)'}`,
      )
    }
    return output
  }
}
