import { z } from 'zod'
import { Family, Mode, Support } from './common.js'

const nullableNumber = z.number().nullable()
const nullableString = z.string().nullable()

/**
 * Every fact a rule may read, with its type and meaning. Closed: a condition on a fact that is not here is
 * refused when the pack is loaded, so a typo fails loudly instead of making a condition silently false.
 * Facts are derived from the hardware profile, the workload and the mode by `deriveFacts`; a fact the
 * profile cannot tell is `null`, never missing.
 */
export const FACTS = {
  mode: { schema: Mode, doc: 'The plan mode: conservative, balanced or extreme.' },
  platform: { schema: z.string(), doc: 'Operating system as Node names it: linux, darwin, win32.' },
  container: { schema: z.boolean(), doc: 'Running inside a container (cgroup limits apply).' },
  virtualized: { schema: z.boolean().nullable(), doc: 'Running in a virtual machine; null when unknown.' },

  gpuCount: {
    schema: z.number().int().nonnegative(),
    doc: 'Training GPUs: devices of the same model as the primary GPU (or the number the plan uses). 0 without a usable GPU.',
  },
  gpuVendor: {
    schema: z.enum(['nvidia', 'amd', 'intel', 'apple', 'other', 'none']),
    doc: 'Vendor of the primary GPU; none without a usable GPU.',
  },
  gpuName: { schema: nullableString, doc: 'Primary GPU name as the vendor tool prints it.' },
  gpuFamily: { schema: Family, doc: 'Plugin family of the primary GPU; cpu without a usable GPU.' },
  gpuCatalogId: {
    schema: nullableString,
    doc: 'GPU catalog id of the primary GPU (rtx-4090, a100-40gb-sxm4), null when not matched.',
  },
  gpuArch: { schema: nullableString, doc: 'Architecture label, e.g. "Ada Lovelace (AD102)".' },
  mobileGpu: { schema: z.boolean(), doc: 'A laptop variant (name says Laptop, Mobile or Max-Q).' },
  computeCapability: {
    schema: nullableNumber,
    doc: 'CUDA compute capability as a number (8.9); null off NVIDIA.',
  },
  computeCapabilityMajor: {
    schema: z.number().int().nullable(),
    doc: 'Major part of the compute capability (8).',
  },
  gfxTarget: { schema: nullableString, doc: 'AMD LLVM target (gfx1100, gfx90a); null off AMD.' },
  metalFamily: {
    schema: nullableString,
    doc: 'Apple GPU family (apple7 = M1, apple8 = M2, apple9 = M3/M4).',
  },
  appleChipGeneration: {
    schema: z.number().int().nullable(),
    doc: 'Apple silicon generation: 1 for M1, 2 for M2, ...',
  },
  vramGiB: {
    schema: z.number().nonnegative(),
    doc: 'Usable memory of the primary GPU in GiB, one decimal (an Apple GPU: its working set). 0 without a GPU.',
  },
  totalVramGiB: { schema: z.number().nonnegative(), doc: 'vramGiB times gpuCount.' },
  tensorCores: {
    schema: z.boolean().nullable(),
    doc: 'The primary GPU has matrix units (tensor / matrix cores).',
  },
  fp16: { schema: Support, doc: 'FP16 support of the primary GPU: yes, no, emulated, unknown.' },
  bf16: { schema: Support, doc: 'BF16 support of the primary GPU.' },
  tf32: { schema: Support, doc: 'TF32 support of the primary GPU.' },
  fp8: { schema: Support, doc: 'FP8 support of the primary GPU.' },
  unifiedMemory: { schema: z.boolean(), doc: 'The GPU shares system memory (Apple silicon).' },
  integratedGpu: {
    schema: z.boolean(),
    doc: 'The machine has only an integrated (non-Apple) GPU, which rigfit does not train on.',
  },
  migEnabled: { schema: z.boolean(), doc: 'NVIDIA Multi-Instance GPU mode is on for the primary GPU.' },
  interconnect: {
    schema: z.enum(['nvlink', 'pcie', 'xgmi', 'mixed', 'none', 'unknown']),
    doc: 'Link between the training GPUs; none with one GPU or none.',
  },
  gpuTdpWatts: { schema: nullableNumber, doc: 'Board power of the primary GPU in watts.' },
  gpuTempC: { schema: nullableNumber, doc: 'Current temperature of the primary GPU in °C.' },
  driverVersionMajor: { schema: z.number().int().nullable(), doc: 'GPU driver major version (NVIDIA 550).' },
  cudaVersion: { schema: nullableNumber, doc: 'CUDA version the driver supports, as a number (12.4).' },
  rocmVersion: { schema: nullableNumber, doc: 'ROCm version, as a number (6.1).' },
  mps: { schema: z.boolean(), doc: 'PyTorch Metal (MPS) acceleration is available.' },

  cpuVendor: {
    schema: z.string(),
    doc: 'CPU vendor, lower case: intel, amd, apple, arm or what the CPU reports.',
  },
  cpuArch: { schema: z.string(), doc: 'CPU architecture as Node names it: x64, arm64.' },
  physicalCores: { schema: z.number().int().positive(), doc: 'Physical CPU cores.' },
  logicalCores: { schema: z.number().int().positive(), doc: 'Logical CPU cores (hardware threads).' },
  usableCores: {
    schema: z.number().positive(),
    doc: 'Cores this process may use (a container quota where one is set).',
  },
  spareCores: {
    schema: z.number().int().positive(),
    doc: 'Cores left for data loading after the training loop takes one: max(1, floor(usableCores) - 1).',
  },
  numaNodes: { schema: z.number().int().positive(), doc: 'NUMA nodes (sockets on most servers).' },
  avx2: { schema: z.boolean(), doc: 'CPU has AVX2.' },
  avx512: { schema: z.boolean(), doc: 'CPU has AVX-512 (foundation).' },
  avx512bf16: { schema: z.boolean(), doc: 'CPU has AVX-512 BF16 instructions.' },
  amx: { schema: z.boolean(), doc: 'CPU has AMX tiles (Sapphire Rapids and later).' },
  neon: { schema: z.boolean(), doc: 'CPU has NEON (ARM).' },
  ramGiB: { schema: z.number().nonnegative(), doc: 'Total system memory in GiB, one decimal.' },
  usableRamGiB: {
    schema: z.number().nonnegative(),
    doc: 'System memory a run may plan on in GiB (container limit, OS reserve).',
  },
  storageKind: {
    schema: z.enum(['nvme', 'ssd', 'hdd', 'unknown']),
    doc: 'Kind of the storage device with the most free space (where datasets and checkpoints go).',
  },

  onBattery: { schema: z.boolean(), doc: 'A laptop running on battery.' },
  batteryPercent: { schema: nullableNumber, doc: 'Battery charge in percent; null without a battery.' },
  throttlingRisk: {
    schema: z.enum(['low', 'medium', 'high', 'unknown']),
    doc: 'Thermal throttling risk from the profile.',
  },

  workloadKind: {
    schema: z.enum(['pretrain', 'finetune', 'none']),
    doc: 'What is trained; none when no workload is given.',
  },
  method: { schema: z.enum(['auto', 'full', 'lora', 'qlora', 'none']), doc: 'Fine-tuning method asked for.' },
  modelParamsB: {
    schema: nullableNumber,
    doc: 'Parameters of the model in billions, when the planner knows them.',
  },
  seq: { schema: z.number().int().positive().nullable(), doc: 'Sequence length asked for, when given.' },
  nodes: {
    schema: z.number().int().positive(),
    doc: 'Machines in the job (1 unless the workload says more).',
  },
} as const satisfies Record<string, { schema: z.ZodType; doc: string }>

export type FactName = keyof typeof FACTS
export const FACT_NAMES = Object.keys(FACTS) as FactName[]
export const FactName = z.enum(FACT_NAMES as [FactName, ...FactName[]])

type FactShape = { [K in FactName]: (typeof FACTS)[K]['schema'] }
/** The complete set of facts one rules run reads. Every fact is present; unknown values are null. */
export const Facts = z.strictObject(
  Object.fromEntries(FACT_NAMES.map((name) => [name, FACTS[name].schema])) as unknown as FactShape,
)
export type Facts = z.infer<typeof Facts>
export type FactValue = Facts[FactName]

/** Whether `value` is a value this fact can take (used to catch typos such as gpuFamily = "rtx4O"). */
export function acceptsValue(name: FactName, value: unknown): boolean {
  return FACTS[name].schema.safeParse(value).success
}
