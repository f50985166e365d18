import { type Command, Flags } from '@oclif/core'
import { type HardwareProfile, parseGiB } from '@rigfit/core'
import {
  applyOverrides,
  collectProfile,
  hasOverrides,
  loadProfile,
  type ProfileOverrides,
  type ProfileProgressEvent,
} from '@rigfit/profiler'
import { loadAllCatalogEntries } from './catalog.js'
import { inputTimeoutMs } from './input-timeout.js'

const gibFlag = (name: 'vram' | 'ram', description: string) =>
  Flags.custom<number>({
    description,
    helpGroup: 'HARDWARE',
    helpValue: 'GiB',
    parse: async (input) => parseGiB(input, `--${name}`),
  })()

/**
 * The flags every command that needs a HardwareProfile spreads into its own: a saved profile instead of
 * detection, and overrides for wrong detection or for hardware you do not have.
 */
export const profileSourceFlags = {
  from: Flags.string({
    description:
      'Use a saved profile (from `rigfit profile --out FILE`) instead of detecting this machine; plan, analyze, export and report also take a cluster profile (from `rigfit profile --slurm --out FILE`) and plan every node as the weakest.',
    helpGroup: 'HARDWARE',
    helpValue: 'FILE',
  }),
  vram: gibFlag('vram', 'Override the VRAM of every GPU, in GiB (wrong detection, or what-if).'),
  ram: gibFlag('ram', 'Override the RAM, in GiB (what-if).'),
  gpu: Flags.string({
    description:
      'What-if: plan for this GPU from the catalog instead of the detected ones, e.g. "RTX 3060 12GB".',
    helpGroup: 'HARDWARE',
    helpValue: 'NAME',
  }),
  gpus: Flags.integer({
    description: 'What-if: this many GPUs (copies of --gpu, or of the detected GPU).',
    helpGroup: 'HARDWARE',
    min: 1,
    max: 1024,
  }),
  interconnect: Flags.option({
    description:
      'What-if: the link between the planned GPUs (nvlink, pcie), or the network between nodes (infiniband).',
    options: ['nvlink', 'pcie', 'infiniband'] as const,
    helpGroup: 'HARDWARE',
  })(),
  cpus: Flags.integer({
    description:
      "What-if: logical CPUs of the planned node, for threads and dataloader workers per GPU (default with what-if GPUs: 12 per GPU, at least 16; a Mac: its chip's cores).",
    helpGroup: 'HARDWARE',
    helpValue: 'N',
    min: 1,
    max: 4096,
  }),
}

export interface ProfileSourceFlagValues {
  from?: string | undefined
  vram?: number | undefined
  ram?: number | undefined
  gpu?: string | undefined
  gpus?: number | undefined
  cpus?: number | undefined
  interconnect?: 'nvlink' | 'pcie' | 'infiniband' | undefined
  /** Seconds a FIFO given as --from may take (see input-timeout.ts). */
  timeout?: number | undefined
}

export function overridesFromFlags(flags: ProfileSourceFlagValues): ProfileOverrides {
  return {
    ...(flags.vram === undefined ? {} : { vramGiB: flags.vram }),
    ...(flags.ram === undefined ? {} : { ramGiB: flags.ram }),
    ...(flags.gpu === undefined ? {} : { gpu: flags.gpu }),
    ...(flags.gpus === undefined ? {} : { gpus: flags.gpus }),
    ...(flags.cpus === undefined ? {} : { cpus: flags.cpus }),
    ...(flags.interconnect === undefined ? {} : { interconnect: flags.interconnect }),
  }
}

export interface ResolveProfileOptions {
  benchmark?: boolean
  timeoutMs?: number
  benchDir?: string
  networkUrl?: string
  /** Show probe and benchmark progress on stderr (only drawn when stderr is a terminal). */
  progress?: boolean
}

/**
 * The HardwareProfile a command works on: loaded from `--from FILE` or detected on this machine (GPUs named
 * from the installed plugins' catalogs), then changed by `--vram`, `--ram`, `--gpu`, `--gpus`.
 */
export async function resolveProfile(
  command: Command,
  flags: ProfileSourceFlagValues,
  options: ResolveProfileOptions = {},
): Promise<HardwareProfile> {
  const catalog = await loadAllCatalogEntries(command)
  const progress = options.progress ? progressLine() : null
  try {
    const base = flags.from
      ? // `profile` passes its probe deadline (ms); the other commands have --timeout in seconds.
        await loadProfile(flags.from, options.timeoutMs ?? inputTimeoutMs(flags))
      : await collectProfile({
          catalog,
          benchmark: options.benchmark ?? false,
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
          ...(options.benchDir === undefined ? {} : { benchDir: options.benchDir }),
          ...(options.networkUrl === undefined ? {} : { networkUrl: options.networkUrl }),
          ...(progress ? { onProgress: progress.update } : {}),
        })
    const overrides = overridesFromFlags(flags)
    return hasOverrides(overrides) ? applyOverrides(base, overrides, catalog) : base
  } finally {
    progress?.done()
  }
}

/**
 * One self-rewriting status line on stderr while probes and benchmarks run; nothing at all when stderr is
 * not a terminal (pipes, CI, --json captures), so output stays clean.
 */
export function progressLine(stream: NodeJS.WriteStream = process.stderr): {
  update: (event: ProfileProgressEvent) => void
  done: () => void
} {
  if (!stream.isTTY) return { update: () => {}, done: () => {} }
  let probes = 0
  let drawn = false
  const draw = (text: string) => {
    const width = Math.max(20, (stream.columns ?? 80) - 1)
    stream.write(`\r\u001b[2K${text.slice(0, width)}`)
    drawn = true
  }
  return {
    update: (event) => {
      if (event.kind === 'probe') {
        probes += 1
        draw(
          `Profiling… ${probes} probes done (last: ${event.name} ${event.ok ? 'ok' : 'failed'}, ${Math.round(event.ms)} ms)`,
        )
      } else {
        const filled = Math.round(event.fraction * 20)
        draw(
          `Benchmark [${'#'.repeat(filled)}${'-'.repeat(20 - filled)}] ${event.message} ${Math.round(event.fraction * 100)}%`,
        )
      }
    },
    done: () => {
      if (drawn) stream.write('\r\u001b[2K')
    },
  }
}
