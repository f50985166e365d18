import type { Mode } from '../schemas/common.js'
import type { HardwareProfile } from '../schemas/hardware-profile.js'
import type { Settings } from '../schemas/training-plan.js'
import { planDataloader } from './dataloader.js'
import type { DecisionReader } from './decided.js'
import type { TrainingDevices } from './training-devices.js'

export type RuntimeSettings = Pick<
  Settings,
  'compile' | 'cudnnBenchmark' | 'backend' | 'threads' | 'dataloader'
>

export interface RuntimeInput {
  reader: DecisionReader
  mode: Mode
  profile: HardwareProfile
  devices: TrainingDevices
  /** Training processes on each node: one per data-parallel GPU, one on the CPU. */
  ranksPerNode: number
  /** torch.compile as the compute settings chose it. */
  compile: boolean
  /** Whether compilation works over the plan's quantized base with the stack's versions (compile-support.ts). */
  quantCompile: { compiles: boolean; reason: string }
}

/**
 * Kernel, collective and host settings. Each is settled once, to its final value, and traced with the rule or
 * the reason behind it. The CPU is shared by the ranks of a node: threads and loader workers are per rank, from
 * the planned machine's cores divided among its ranks, never more than the node has.
 */
export function runtimeSettings(input: RuntimeInput): RuntimeSettings {
  const kernels = kernelSettings(input)
  const ranks = Math.max(1, input.ranksPerNode)
  const cpu = rankThreads(input, ranks)
  return {
    compile: kernels.compile,
    cudnnBenchmark: kernels.cudnnBenchmark,
    backend: kernels.backend,
    threads: cpu.threads,
    dataloader: dataloaderSettings(input, ranks, cpu),
  }
}

/** torch.compile and its mode, cuDNN's kernel search and the collective backend. */
function kernelSettings(input: RuntimeInput) {
  const { reader, mode, devices } = input
  const gpuKernels = devices.kind !== 'cpu' && devices.kind !== 'mps'
  const compileEnabled = input.compile && input.quantCompile.compiles
  reader.settle(
    'compile',
    compileEnabled,
    input.compile && !input.quantCompile.compiles
      ? input.quantCompile.reason
      : 'torch.compile helps on CUDA and ROCm; not on CPU or MPS',
  )
  const compileMode = reader.preferred<Settings['compile']['mode']>(
    'compileMode',
    mode === 'extreme' ? 'max-autotune' : 'default',
  )
  reader.settle('compileMode', compileMode, 'max-autotune searches kernels longer for the last few percent')
  const cudnnBenchmark = reader.preferred('cudnnBenchmark', gpuKernels)
  reader.settle('cudnnBenchmark', cudnnBenchmark, 'fixed shapes: let cuDNN pick the fastest kernels')
  const backend = reader.preferred<Settings['backend']>('backend', defaultBackend(devices))
  reader.settle('backend', backend, 'the collective backend of the device vendor')
  return { compile: { enabled: compileEnabled, mode: compileMode }, cudnnBenchmark, backend }
}

/** Intra-op threads of one rank: its share of the node's physical and usable cores. */
function rankThreads(input: RuntimeInput, ranks: number) {
  const { reader, profile } = input
  const cores = {
    physicalCores: profile.cpu.physicalCores,
    usableCores: profile.cpu.usableCores,
    ranksPerNode: ranks,
  }
  const physicalPerRank = Math.max(1, Math.floor(profile.cpu.physicalCores / ranks))
  const usablePerRank = Math.max(1, Math.floor(profile.cpu.usableCores / ranks))
  const threadsPreferred = reader.preferred('threads', profile.cpu.physicalCores)
  const threads = Math.max(
    1,
    Math.min(threadsPreferred, physicalPerRank, usablePerRank, reader.cap('threads') ?? Infinity),
  )
  reader.settle(
    'threads',
    threads,
    ranks > 1
      ? `one intra-op thread per physical core of this rank's share: ${ranks} ranks share ${profile.cpu.physicalCores} physical cores (${profile.cpu.usableCores} usable)`
      : 'one intra-op thread per physical core, within the cores this process may use',
    cores,
  )
  return { threads, cores, usablePerRank }
}

/** The data loader of one rank: workers within its cores, pinned memory, prefetch, persistent workers. */
function dataloaderSettings(
  input: RuntimeInput,
  ranks: number,
  cpu: ReturnType<typeof rankThreads>,
): RuntimeSettings['dataloader'] {
  const { reader, profile, devices } = input
  const { cores, usablePerRank } = cpu
  const cpuOnly = devices.kind === 'cpu'
  const gpuKernels = !cpuOnly && devices.kind !== 'mps'
  const loader = planDataloader({
    deviceMemoryBytes: devices.capacityBytes,
    usableCores: profile.cpu.usableCores,
    gpusPerNode: ranks,
    cpuOnly,
    pinMemoryAllowed: gpuKernels,
  })
  // A rank keeps one core for its training loop; a GPU rank loads in at least one worker process.
  const workerLimit = Math.max(cpuOnly ? 0 : 1, usablePerRank - 1)
  const workers = Math.min(
    reader.preferred('dataloaderWorkers', loader.workers),
    reader.cap('dataloaderWorkers') ?? Infinity,
    workerLimit,
  )
  reader.settle(
    'dataloaderWorkers',
    workers,
    `about one worker per 3 GB of device memory, at most ${workerLimit} per rank: the rank's ${usablePerRank} usable cores less one for its training loop`,
    { ...cores, capacityBytes: devices.capacityBytes },
  )
  const pinMemory = reader.preferred('pinMemory', loader.pinMemory)
  reader.settle('pinMemory', pinMemory, 'page-locked host buffers speed up host-to-GPU copies')
  const prefetchFactor = workers > 0 ? reader.preferred('prefetchFactor', 2) : null
  reader.settle(
    'prefetchFactor',
    prefetchFactor,
    workers > 0 ? 'two batches in flight per worker' : 'no loader workers: the main process loads each batch',
    { dataloaderWorkers: workers },
  )
  const persistentWorkers = workers > 0 && reader.preferred('persistentWorkers', true)
  reader.settle(
    'persistentWorkers',
    persistentWorkers,
    workers > 0 ? 'keep workers alive between epochs' : 'no loader workers to keep alive',
    { dataloaderWorkers: workers },
  )
  return { workers, pinMemory, prefetchFactor, persistentWorkers }
}

function defaultBackend(devices: TrainingDevices): Settings['backend'] {
  if (devices.kind === 'cuda') return 'nccl'
  if (devices.kind === 'rocm') return 'rccl'
  if (devices.kind === 'mps') return 'none'
  return 'gloo'
}
