export { amdPrecision, appleGpuFamily, applePrecision, nvidiaPrecision } from '@rigfit/core'
export { type DiskBenchmarkResult, measureDisk } from './bench/disk.js'
export { type MemoryBandwidthResult, measureMemoryBandwidth } from './bench/memory-bandwidth.js'
export { measureDownload, type NetworkBenchmarkResult } from './bench/network.js'
export { type BenchmarkOptions, runBenchmarks } from './bench/run-benchmarks.js'
export { buildProfile } from './build-profile.js'
export {
  loadProfileDocument,
  type ProfileDocument,
  parseClusterProfileText,
  saveClusterProfile,
} from './cluster-file.js'
export {
  type CollectOptions,
  collectProbes,
  DEFAULT_PROBE_TIMEOUT_MS,
  type ProbeCollection,
} from './collect-probes.js'
export { type CollectProfileOptions, collectProfile } from './collect-profile.js'
export { runTool, type ToolResult } from './exec/run-tool.js'
export { ToolStream, type ToolStreamEnd } from './exec/tool-stream.js'
export { appleWorkingSetBytes } from './gpu/apple.js'
export { applyCatalogEntry, enrichFromCatalog, gpuFromCatalog } from './gpu/enrich.js'
export { assumedGpuVariant, gpuVariantMessage } from './gpu-variant.js'
export { classifyBlockDevice } from './linux/block-device.js'
export { readNetworkPorts } from './linux/network-ports.js'
export { osReserveBytes } from './memory-reserve.js'
export {
  applyOverrides,
  hasOverrides,
  type ProfileOverrides,
  resolveCatalogGpu,
  resolveCatalogGpuMatch,
} from './overrides.js'
export { parseAmdSmi } from './parsers/amd-smi.js'
export { cgroupLimitsFromFiles, parseCgroupLimits, parseProcCgroup } from './parsers/cgroup.js'
export { parseCpuinfo, trainingIsaFlags } from './parsers/cpuinfo.js'
export { parseGrepDump } from './parsers/grep-dump.js'
export { parseMeminfo } from './parsers/meminfo.js'
export { parseMountinfo } from './parsers/mountinfo.js'
export { networkPorts } from './parsers/network-ports.js'
export {
  NVIDIA_QUERY_FIELDS,
  type NvidiaGpuRow,
  nvidiaQueryArgs,
  parseNvidiaComputeCap,
  parseNvidiaCsvLine,
  parseNvidiaCudaVersion,
  parseNvidiaIndexedValues,
  parseNvidiaMigMode,
  parseNvidiaSmiCsv,
} from './parsers/nvidia-smi.js'
export { parseNvidiaTopo } from './parsers/nvidia-topo.js'
export { parseOsRelease } from './parsers/os-release.js'
export { parsePmsetBattery } from './parsers/pmset.js'
export {
  parsePowerSupplyTree,
  powerSupplyEntriesFromDump,
  summarizePowerSupplies,
} from './parsers/power-supply.js'
export { parseProcSwaps } from './parsers/proc-swaps.js'
export { parseRocmSmiJson, ROCM_SMI_READING_ARGS } from './parsers/rocm-smi.js'
export { parseSysctl } from './parsers/sysctl.js'
export { parseSystemProfilerDisplays } from './parsers/system-profiler.js'
export { parseXpuSmiDiscovery } from './parsers/xpu-smi.js'
export { presetProfile } from './preset-profile.js'
export { ProbeContext, type ProfileProgressEvent, type RawProbeOutput } from './probe-runner.js'
export { loadProfile, parseProfileText, saveProfile } from './profile-file.js'
export { profileSlurmAllocation, type SlurmProfileOptions } from './slurm/profile-allocation.js'
export { allocationId, currentAllocation, parseShownJob } from './slurm/slurm-allocation.js'
export { formatProfileSummary, type SummaryStyle } from './summary.js'
export { throttlingRisk } from './thermal-risk.js'
export { assumptionNotices, whatIfHardware } from './what-if-hardware.js'
export {
  ASSUMED_CPUS_PER_GPU,
  ASSUMED_MIN_CPUS,
  assumedCpuCount,
  assumedRamGiB,
  catalogInterconnect,
} from './what-if-host.js'
export { whatIfProfile } from './what-if-profile.js'
