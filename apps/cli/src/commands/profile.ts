import { Flags } from '@oclif/core'
import type { ClusterProfile, HardwareProfile } from '@rigfit/core'
import { RigfitError } from '@rigfit/core'
import { formatProfileSummary, saveProfile } from '@rigfit/profiler'
import { RigfitCommand } from '../lib/base-command.js'
import { profileCluster, renderClusterProfile, slurmProfileFlags } from '../lib/profile-slurm.js'
import { profileSourceFlags, resolveProfile } from '../lib/profile-source.js'

export default class Profile extends RigfitCommand {
  static override description =
    'Detect this machine: CPU, RAM, every GPU (VRAM, compute capability, number formats), interconnect, storage, power and thermals. Each probe runs in parallel with a deadline; a broken tool degrades the profile, never the command.'

  static override examples = [
    '<%= config.bin %> profile',
    '<%= config.bin %> profile --benchmark',
    '<%= config.bin %> profile --json --out profile.json',
    '<%= config.bin %> profile --from profile.json --vram 24',
    '<%= config.bin %> profile --gpu "RTX 3060 12GB" --gpus 2',
    '<%= config.bin %> profile --slurm --out cluster.json',
    '<%= config.bin %> profile --slurm --partition gpu --nodes 4 --out cluster.json',
  ]

  static override flags = {
    ...profileSourceFlags,
    ...slurmProfileFlags,
    benchmark: Flags.boolean({
      description:
        'Also measure memory bandwidth, disk read/write and (with --network-url) download speed; about 10 s.',
      default: false,
    }),
    out: Flags.string({
      description: 'Write the profile as JSON to this file (atomically).',
      helpValue: 'FILE',
    }),
    force: Flags.boolean({ description: 'Replace the --out file if it exists.', default: false }),
    'bench-dir': Flags.string({
      description: 'Directory for the disk benchmark (default: the current directory).',
      helpValue: 'DIR',
    }),
    'network-url': Flags.string({
      description:
        'URL to estimate download bandwidth against (default: $RIGFIT_NETWORK_URL; without one the network stays unknown).',
      helpValue: 'URL',
    }),
    timeout: Flags.integer({
      description: 'Deadline of each probe in milliseconds.',
      default: 2000,
      min: 100,
      max: 60_000,
    }),
  }

  async run(): Promise<HardwareProfile | ClusterProfile> {
    const { flags } = await this.parse(Profile)
    if (flags.force && !flags.out) {
      throw new RigfitError('usage', 'E_USAGE', '--force only applies to --out FILE.', {
        suggestion: 'Add --out FILE, or drop --force.',
      })
    }
    if (flags.slurm) {
      const cluster = await profileCluster(
        this.config.root,
        flags,
        { path: flags.out, force: flags.force },
        (line) => this.logToStderr(line),
      )
      if (!this.jsonEnabled()) {
        this.writeOut(renderClusterProfile(cluster))
        if (flags.out) this.log(`Cluster profile written to ${flags.out}`)
      }
      return cluster
    }
    if (flags.from && flags.benchmark) {
      throw new RigfitError(
        'usage',
        'E_USAGE',
        '--benchmark measures this machine, so it cannot be combined with --from.',
        {
          suggestion: 'Drop --from to profile and benchmark this machine.',
        },
      )
    }
    const profile = await resolveProfile(this, flags, {
      benchmark: flags.benchmark,
      timeoutMs: flags.timeout,
      progress: !this.jsonEnabled(),
      ...(flags['bench-dir'] ? { benchDir: flags['bench-dir'] } : {}),
      ...(flags['network-url'] ? { networkUrl: flags['network-url'] } : {}),
    })
    if (flags.out) await saveProfile(flags.out, profile, { force: flags.force })
    if (!this.jsonEnabled()) {
      const color = this.colorEnabled
      const paint = (code: string) => (text: string) => (color ? `\u001b[${code}m${text}\u001b[0m` : text)
      this.writeOut(formatProfileSummary(profile, { bold: paint('1'), dim: paint('2'), warn: paint('33') }))
      if (flags.out) this.log(`Profile written to ${flags.out}`)
    }
    return profile
  }
}
