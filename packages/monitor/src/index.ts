export { type CadenceAdvice, type CadenceInput, checkpointCadence } from './act/checkpoint-cadence.js'
export { replanForGpus } from './act/gpu-failover.js'
export { HysteresisGate } from './act/hysteresis-gate.js'
export {
  configsForLaunch,
  type ExportedConfigs,
  type LaunchConfigs,
  pointAtCopies,
} from './act/launch-configs.js'
export {
  deviceSelectionEnv,
  initialSettings,
  launchEnv,
  parseVisibleDevices,
  type SettingsOverrides,
} from './act/launch-settings.js'
export { nextOomSettings, type OomStep } from './act/oom-ladder.js'
export { planForLaunch, writePlanCopy } from './act/plan-copy.js'
export {
  describeChanges,
  type HostCpuReader,
  type ReestimatedCopy,
  reestimateCopy,
} from './act/reestimate-copy.js'
export type { SettingsChange } from './act/settings-change.js'
export { classifyExit, type ExitEvidence, type ExitStatus, exitCodeOf } from './detect/classify-exit.js'
export { CrashLoopGuard } from './detect/crash-loop.js'
export {
  DEVICE_ERROR_PATTERNS,
  GPU_OOM_PATTERNS,
  matchDeviceError,
  matchGpuOom,
} from './detect/failure-patterns.js'
export { fitLine, type LinearFit } from './detect/linear-fit.js'
export {
  DEFAULT_TREND_OPTIONS,
  MemoryTrend,
  type TrendOptions,
  type TrendVerdict,
} from './detect/memory-trend.js'
export { MetricsFileTail } from './metrics/metrics-file-tail.js'
export {
  metricsFromObject,
  type ParsedMetrics,
  parseTrainingLine,
  type TrainerMetrics,
} from './metrics/parse-training-line.js'
export { parsePythonLiteral } from './metrics/python-literal.js'
export { type ProgressSnapshot, TrainingProgress } from './metrics/training-progress.js'
export {
  DEFAULT_MONITOR_OPTIONS,
  type MonitorActions,
  type MonitorOptions,
  validateMonitorOptions,
} from './options.js'
export { OutputLines } from './process/output-lines.js'
export { type GroupExit, ProcessGroup } from './process/process-group.js'
export { multiNodeName, nodeRunLogs, RUN_LOG_FILE, runLogFileName } from './record/node-log.js'
export { MONITOR_STOPPED_EXIT_CODE, type MonitorResult } from './run/monitor-result.js'
export {
  describeFailure,
  type FailureCause,
  planRelaunch,
  type RelaunchInput,
  type RelaunchPlan,
} from './run/relaunch-plan.js'
export { runMonitor } from './run-monitor.js'
export type { Clock, TimerHandle, Timers } from './runtime/clock.js'
export type {
  MonitorRuntime,
  ProcessEvent,
  ProcessHooks,
  SampleSource,
  TrainerGroup,
} from './runtime/monitor-runtime.js'
export { findAmdGpuDevices, readAmdGpus } from './sampling/amdgpu-sysfs.js'
export { type HostCpuDevice, type HostCpuSources, readHostCpuDevice } from './sampling/host-cpu-device.js'
export { cpuPercentBetween, readBattery, readCpuTimes, readMemInfo } from './sampling/host-readings.js'
export {
  MONITOR_NVIDIA_FIELDS,
  NvidiaSmiStream,
  type NvidiaSweep,
  nvidiaSmiStreamArgs,
} from './sampling/nvidia-smi-stream.js'
export { type Sample, Sampler, type SamplerOptions } from './sampling/sampler.js'
export type { ViewMode } from './view/monitor-view.js'
export { type LimitCause, type LimitEvent, type LimitOptions, LimitWatch } from './watch/limit-watch.js'
export { type MemoryFinding, type MemorySeries, MemoryWatch, memorySeries } from './watch/memory-watch.js'
export { PauseState } from './watch/pause-state.js'
