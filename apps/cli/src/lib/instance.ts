import { type Command, Flags } from '@oclif/core'
import { CLOUD_PRESETS, findCloudPreset, type HardwareProfile, RigfitError } from '@rigfit/core'
import { presetProfile } from '@rigfit/profiler'
import { loadAllCatalogEntries } from './catalog.js'
import { type ProfileSourceFlagValues, type ResolveProfileOptions, resolveProfile } from './profile-source.js'

/** Cloud-preset flags shared by `analyze` and `plan`. */
export const instanceFlags = {
  instance: Flags.string({
    description: `What-if: plan for a cloud instance (${CLOUD_PRESETS.map((preset) => preset.id).join(', ')}).`,
    helpGroup: 'HARDWARE',
    exclusive: ['from', 'gpu', 'cpus'],
  }),
  'price-per-hour': Flags.string({
    description:
      "Price of one machine per hour in US dollars, for the plan's cost (default for --instance: its on-demand list price; with --recommend: per GPU).",
    helpGroup: 'HARDWARE',
  }),
}

export interface InstanceFlagValues extends ProfileSourceFlagValues {
  instance?: string | undefined
  'price-per-hour'?: string | undefined
}

export function parsePrice(text: string | undefined): number | null {
  if (text === undefined) return null
  const value = Number(text.trim().replace(/^\$/, ''))
  if (text.trim() === '' || !Number.isFinite(value) || value < 0) {
    throw new RigfitError(
      'usage',
      'E_BAD_PRICE',
      `--price-per-hour "${text}" is not a price: it must be a number of US dollars, 0 or more.`,
      { suggestion: 'Pass the hourly price of one machine, e.g. --price-per-hour 2.49.' },
    )
  }
  return value
}

/** The per-hour price of one node: --price-per-hour, else the --instance preset's list price, else null. */
export function pricePerHour(flags: InstanceFlagValues): number | null {
  const explicit = parsePrice(flags['price-per-hour'])
  if (explicit !== null) return explicit
  return flags.instance ? (findCloudPreset(flags.instance)?.pricePerHour ?? null) : null
}

/** The profile to plan for: a cloud preset (--instance), else what `resolveProfile` gives. */
export async function resolvePlanningProfile(
  command: Command,
  flags: InstanceFlagValues,
  options: ResolveProfileOptions = {},
): Promise<HardwareProfile> {
  if (!flags.instance) return resolveProfile(command, flags, options)
  const preset = findCloudPreset(flags.instance)
  if (!preset) {
    throw new RigfitError('usage', 'E_UNKNOWN_INSTANCE', `No cloud preset named "${flags.instance}".`, {
      suggestion: `Known presets: ${CLOUD_PRESETS.map((p) => p.id).join(', ')}. Or describe the machine with --gpu NAME --gpus N.`,
    })
  }
  return presetProfile(preset, await loadAllCatalogEntries(command), flags.gpus ?? preset.gpus)
}
