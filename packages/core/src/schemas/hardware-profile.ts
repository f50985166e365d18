import { z } from 'zod'
import { Bytes, Family, GpuVendor, Support } from './common.js'

// Real machines stay far inside these ranges; a value outside is a broken tool or a hand-edited file, refused at
// load with its JSON path (docs/profile.md lists them).
const MAX_CORES = 65_536
const MAX_DEVICE_INDEX = 1023
const DAY_MS = 86_400_000
const DeviceIndex = z.number().int().nonnegative().max(MAX_DEVICE_INDEX)
/** GB/s, MB/s, Mbit/s and TFLOPS alike: the fastest parts are thousands; a million is garbage. */
const Rate = z.number().nonnegative().max(1_000_000)
const Watts = z.number().nonnegative().max(1_000_000)
const Celsius = z.number().min(-100).max(250)
const MHz = z.number().nonnegative().max(100_000)
const GHz = z.number().nonnegative().max(20)
const PcieNumber = z.number().int().nonnegative().max(64)

export const HARDWARE_PROFILE_SCHEMA_VERSION = 1

/** One detection step (a tool run, a file read): whether it worked and how long it took. */
export const ProbeRecord = z.object({
  name: z.string(),
  ok: z.boolean(),
  ms: z.number().nonnegative().max(DAY_MS),
  error: z.string().optional(),
  /** The tool or file does not exist on this machine (rocm-smi on an NVIDIA box): expected, not a fault. */
  absent: z.boolean().optional(),
})
export type ProbeRecord = z.infer<typeof ProbeRecord>

export const CatalogMatch = z.object({
  id: z.string(),
  name: z.string(),
  pack: z.string(),
  matchedBy: z.enum(['exact', 'normalized', 'vram', 'override']),
})
export type CatalogMatch = z.infer<typeof CatalogMatch>

export const Gpu = z.object({
  index: z.number().int().nonnegative().max(MAX_DEVICE_INDEX),
  vendor: GpuVendor,
  name: z.string(),
  uuid: z.string().nullable().default(null),
  /** PCI bus id as the vendor tool prints it (`00000000:01:00.0`), when known. */
  busId: z.string().nullable().default(null),
  /** Which probe reported this device: nvidia-smi, rocm-smi, amd-smi, sysfs, system_profiler, catalog (what-if). */
  detectedBy: z.string().default('unknown'),
  family: Family,
  arch: z.string().nullable(),
  integrated: z.boolean(),
  unifiedMemory: z.boolean(),
  vramTotalBytes: Bytes,
  vramFreeBytes: Bytes.nullable(),
  /** For unified memory: the share of RAM the GPU may wire (Apple working set); otherwise equal to total. */
  vramUsableBytes: Bytes,
  computeCapability: z.string().nullable(),
  gfxTarget: z.string().nullable(),
  metalFamily: z.string().nullable(),
  tensorCores: z.boolean().nullable(),
  fp16: Support,
  bf16: Support,
  tf32: Support,
  fp8: Support,
  int8: Support,
  memoryBandwidthGBs: Rate.nullable(),
  fp32Tflops: Rate.nullable(),
  fp16TensorTflops: Rate.nullable(),
  tdpWatts: Watts.nullable(),
  powerLimitWatts: Watts.nullable(),
  powerDrawWatts: Watts.nullable(),
  temperatureC: Celsius.nullable(),
  utilizationPercent: z.number().min(0).max(100).nullable(),
  clocks: z.object({
    smMHz: MHz.nullable(),
    memMHz: MHz.nullable(),
    maxSmMHz: MHz.nullable(),
  }),
  /** Current PCIe link (it drops at idle on many boards) and the most the link can do. */
  pcie: z.object({
    gen: PcieNumber.nullable(),
    width: PcieNumber.nullable(),
    maxGen: PcieNumber.nullable().default(null),
    maxWidth: PcieNumber.nullable().default(null),
  }),
  driverVersion: z.string().nullable(),
  migMode: z.enum(['enabled', 'disabled', 'unsupported', 'unknown']),
  catalog: CatalogMatch.nullable(),
})
export type Gpu = z.infer<typeof Gpu>

export const LinkKind = z.enum(['nvlink', 'pcie', 'xgmi', 'same-board', 'unknown'])
export type LinkKind = z.infer<typeof LinkKind>

/** Between nodes: the cluster network a multi-node job's gradients cross (RoCE: RDMA over Ethernet). */
export const NodeNetwork = z.enum(['infiniband', 'roce', 'efa', 'ethernet', 'unknown'])
export type NodeNetwork = z.infer<typeof NodeNetwork>

/**
 * A network port of this machine that could carry traffic between nodes: an InfiniBand port, an RDMA port on
 * Ethernet (RoCE), or a physical Ethernet interface. Loopback, bridges and virtual interfaces are left out.
 */
export const NetworkPort = z.object({
  /** The interface (`eth0`) or the RDMA device and port (`mlx5_0/1`). */
  name: z.string(),
  kind: z.enum(['infiniband', 'roce', 'ethernet']),
  /** Link speed in Gbit/s as the kernel reports it; null when the link is down or the driver says nothing. */
  speedGbps: Rate.nullable(),
  up: z.boolean(),
})
export type NetworkPort = z.infer<typeof NetworkPort>

export const Interconnect = z.object({
  kind: z.enum(['nvlink', 'pcie', 'xgmi', 'mixed', 'none', 'unknown']),
  links: z.array(z.object({ a: DeviceIndex, b: DeviceIndex, kind: LinkKind, detail: z.string() })),
  /** The network between nodes, when known (`--interconnect infiniband`, a cloud preset's). */
  network: NodeNetwork.optional(),
  /** The machine's network ports (Linux sysfs), which a cluster profile reads the network between nodes from. */
  ports: z.array(NetworkPort).optional(),
})

export const StorageKind = z.enum(['nvme', 'ssd', 'hdd', 'unknown'])
export type StorageKind = z.infer<typeof StorageKind>

export const HardwareProfile = z.object({
  schemaVersion: z.literal(HARDWARE_PROFILE_SCHEMA_VERSION),
  createdAt: z.string(),
  rigfitVersion: z.string(),
  /** How this profile came to be: detected here, loaded from a file, or a what-if. */
  source: z.enum(['detected', 'file', 'what-if', 'fixture']),
  overrides: z.array(z.string()),
  host: z.object({
    hostname: z.string(),
    platform: z.string(),
    distro: z.string(),
    release: z.string(),
    kernel: z.string(),
    arch: z.string(),
    virtualized: z.boolean().nullable(),
    container: z.object({
      detected: z.boolean(),
      memoryLimitBytes: Bytes.nullable(),
      cpuQuotaCores: z.number().nonnegative().max(MAX_CORES).nullable(),
      cgroupVersion: z.union([z.literal(1), z.literal(2)]).nullable(),
    }),
  }),
  cpu: z.object({
    vendor: z.string(),
    brand: z.string(),
    arch: z.string(),
    physicalCores: z.number().int().positive().max(MAX_CORES),
    logicalCores: z.number().int().positive().max(MAX_CORES),
    /** Cores this process may use: the container quota where one is set. */
    usableCores: z.number().positive().max(MAX_CORES),
    baseGHz: GHz.nullable(),
    boostGHz: GHz.nullable(),
    flags: z.object({
      avx2: z.boolean(),
      avx512: z.boolean(),
      avx512bf16: z.boolean(),
      amx: z.boolean(),
      fma: z.boolean(),
      neon: z.boolean(),
    }),
    numaNodes: z
      .number()
      .int()
      .positive()
      .max(MAX_DEVICE_INDEX + 1),
    temperatureC: Celsius.nullable(),
  }),
  memory: z.object({
    totalBytes: Bytes,
    availableBytes: Bytes,
    osReserveBytes: Bytes,
    /** RAM a training run may plan on: min(total, container limit) minus the OS reserve. */
    usableBytes: Bytes,
    limitedBy: z.enum(['host', 'cgroup']),
    swap: z.object({
      totalBytes: Bytes,
      deviceKind: z.enum(['nvme', 'ssd', 'hdd', 'zram', 'unknown', 'none']),
    }),
    bandwidthGBs: Rate.nullable(),
  }),
  gpus: z.array(Gpu),
  interconnect: Interconnect,
  acceleration: z.object({
    cuda: z.string().nullable(),
    rocm: z.string().nullable(),
    metal: z.boolean(),
    mps: z.boolean(),
    opencl: z.boolean().nullable(),
    xpu: z.boolean(),
  }),
  storage: z.array(
    z.object({
      mount: z.string(),
      device: z.string(),
      fsType: z.string(),
      kind: StorageKind,
      totalBytes: Bytes,
      freeBytes: Bytes,
      readMBs: Rate.nullable(),
      writeMBs: Rate.nullable(),
    }),
  ),
  network: z.object({
    /** `not-measured`: no benchmark or no target configured; `offline`: the target could not be reached. */
    status: z.enum(['measured', 'not-measured', 'offline']),
    downloadMbps: Rate.nullable(),
    /** The URL the estimate was measured against (user-configured; rigfit has no default target). */
    target: z.string().nullable().default(null),
  }),
  power: z.object({
    batteryPresent: z.boolean(),
    onBattery: z.boolean(),
    acOnline: z.boolean().nullable(),
    percent: z.number().min(0).max(100).nullable(),
    /** Sum of device TDPs that training would draw: GPUs plus the CPU package. */
    tdpBudgetWatts: Watts.nullable(),
  }),
  thermal: z.object({
    cpuTempC: Celsius.nullable(),
    gpuTempsC: z.array(Celsius.nullable()),
    throttlingRisk: z.enum(['low', 'medium', 'high', 'unknown']),
  }),
  benchmark: z.object({
    ran: z.boolean(),
    ms: z.number().nonnegative().max(DAY_MS).nullable(),
    /** How each figure was measured (buffer sizes, passes, O_DIRECT or fsync), so a reader can judge it. */
    notes: z.array(z.string()).default([]),
  }),
  /** Plain-language findings a user should read: "no GPU found", "nvidia-smi timed out", container limits. */
  notes: z.array(z.string()).default([]),
  probes: z.array(ProbeRecord),
})
export type HardwareProfile = z.infer<typeof HardwareProfile>
