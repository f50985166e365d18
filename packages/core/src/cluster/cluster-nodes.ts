import { selectTrainingDevices } from '../plan/training-devices.js'
import type { ClusterDifference } from '../schemas/cluster-profile.js'
import type { HardwareProfile } from '../schemas/hardware-profile.js'
import { gibText } from '../units.js'
import { networkName, nodeNetwork } from './cluster-network.js'

/** A node's strength: training devices' memory first (what fits), then their count and compute. */
function strength(profile: HardwareProfile): [number, number, number] {
  const devices = selectTrainingDevices(profile)
  return [
    devices.capacityBytes,
    Math.max(1, devices.gpus.length),
    devices.estimateDevice.fp16TensorTflops ?? devices.estimateDevice.fp32Tflops,
  ]
}

/** What a node trains on, in words: `8x H100 80GB`, or `CPU <brand>`. */
export function describeNodeDevices(profile: HardwareProfile): string {
  const devices = selectTrainingDevices(profile)
  return devices.gpus.length > 0 ? `${devices.gpus.length}x ${devices.name}` : `CPU ${devices.name}`
}

/**
 * The index of the weakest node: data-parallel training steps at the pace of the slowest node and must fit the
 * smallest, so a multi-node plan is made for it (smallest device memory, then fewest GPUs, then least compute;
 * the first such node on a tie).
 */
export function weakestNodeIndex(profiles: HardwareProfile[]): number {
  if (profiles.length === 0) throw new Error('weakestNodeIndex: no profiles')
  const ranked = profiles
    .map((profile, index) => ({ index, key: strength(profile) }))
    .sort((a, b) => a.key[0] - b.key[0] || a.key[1] - b.key[1] || a.key[2] - b.key[2] || a.index - b.index)
  return ranked[0]?.index ?? 0
}

/** GPU models a node holds side by side, when more than one: the planner trains on one model only. */
export function mixedGpuKinds(profile: HardwareProfile): string[] {
  const kinds = profile.gpus.filter((gpu) => !gpu.integrated || gpu.unifiedMemory).map((gpu) => gpu.name)
  const unique = kinds.filter((kind, index) => kinds.indexOf(kind) === index)
  return unique.length > 1 ? unique : []
}

const FIELDS: [string, (profile: HardwareProfile) => string][] = [
  ['training devices', describeNodeDevices],
  ['device memory (GiB)', (p) => gibText(selectTrainingDevices(p).capacityBytes)],
  ['logical CPUs', (p) => String(p.cpu.logicalCores)],
  ['RAM (GiB)', (p) => gibText(p.memory.totalBytes)],
  [
    'network',
    (p) => {
      const net = nodeNetwork(p)
      return `${networkName(net.kind)}${net.speedGbps === null ? '' : ` ${net.speedGbps} Gbit/s`}`
    },
  ],
]

/** The fields in which the named nodes differ, each with every node's value; empty when they match. */
export function clusterDifferences(nodes: { name: string; profile: HardwareProfile }[]): ClusterDifference[] {
  const differences: ClusterDifference[] = []
  for (const [field, read] of FIELDS) {
    const values = Object.fromEntries(nodes.map((node) => [node.name, read(node.profile)]))
    if (new Set(Object.values(values)).size > 1) differences.push({ field, values })
  }
  return differences
}
