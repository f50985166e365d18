import type { Advice, GpuCatalogEntry, HardwareProfile, WhatIfHardware } from '@rigfit/core'
import { assumedGpuVariant, gpuVariantMessage } from './gpu-variant.js'
import { applyOverrides, type ProfileOverrides } from './overrides.js'
import { presetProfile } from './preset-profile.js'
import { assumedCpuCount, assumedRamGiB } from './what-if-host.js'
import { whatIfProfile } from './what-if-profile.js'

/** The what-if profiles core's hardware search plans on, built against these catalog entries. */
export function whatIfHardware(catalog: GpuCatalogEntry[]): WhatIfHardware {
  return {
    catalogGpus: (entry, gpus) => whatIfProfile({ gpu: entry, gpus }, catalog),
    cloudPreset: (preset) => presetProfile(preset, catalog),
    otherGpus: (profile, change) => applyOverrides(profile, { ...givenHost(profile), ...change }, catalog),
    assumptions: assumptionNotices,
  }
}

/** The host RAM and CPUs of a what-if profile that the user gave (not assumed), as overrides to keep. */
function givenHost(profile: HardwareProfile): ProfileOverrides {
  const given: ProfileOverrides = {}
  const ram = profile.overrides.find((change) => change.startsWith('ram='))
  if (ram && assumedRamGiB(profile) === null) given.ramGiB = Number.parseFloat(ram.slice('ram='.length))
  const cpus = profile.overrides.find((change) => change.startsWith('cpus='))
  if (cpus && assumedCpuCount(profile) === null) given.cpus = Number.parseInt(cpus.slice('cpus='.length), 10)
  return given
}

const assumed = (id: string, message: string): Advice => ({
  id,
  message,
  source: 'profile',
  expectedGain: null,
})

/** The warnings a plan for this profile carries about what a what-if assumed: a GPU variant, the RAM, the CPUs. */
export function assumptionNotices(profile: HardwareProfile): Advice[] {
  const notices: Advice[] = []
  const variant = assumedGpuVariant(profile)
  if (variant !== null) notices.push(assumed('assumed-gpu-variant', gpuVariantMessage(variant)))
  const ram = assumedRamGiB(profile)
  if (ram !== null) {
    notices.push(
      assumed(
        'assumed-ram',
        `The planned node's RAM is assumed, not known: ${ram} GiB, which bounds offloaded states and the data cache. Pass --ram GiB (or --instance) with the real size.`,
      ),
    )
  }
  const cpus = assumedCpuCount(profile)
  if (cpus !== null) {
    notices.push(
      assumed(
        'assumed-cpus',
        `The planned node's CPU is assumed, not known: ${cpus} logical CPUs, which set the threads and dataloader workers of each GPU. Pass --cpus N (or --instance) with the real count.`,
      ),
    )
  }
  return notices
}
