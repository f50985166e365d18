import type { LaunchSettings } from '@rigfit/core'
import type { ProgressSnapshot } from '../metrics/training-progress.js'
import type { Sample } from '../sampling/sampler.js'
import { formatCount, formatDuration, formatGiB } from './format.js'

/** Everything the live view shows; built by the supervisor on each sample. */
export interface ViewState {
  command: string[]
  attempt: number
  maxAttempts: number
  elapsedSeconds: number
  /** Why the trainer is paused, one entry per active pause; empty while it runs. */
  pausedBy: string[]
  sample: Sample | null
  /** The plan's per-device prediction (bytes), for the devices the run uses. */
  predictedBytes: number | null
  inUse: readonly number[] | null
  progress: ProgressSnapshot
  settings: LaunchSettings | null
}

const BAR_WIDTH = 10

function bar(fraction: number): string {
  const filled = Math.max(0, Math.min(BAR_WIDTH, Math.round(fraction * BAR_WIDTH)))
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}]`
}

function settingsText(settings: LaunchSettings | null): string {
  if (settings === null) return ''
  const extras = [settings.gradCheckpointing ? 'ckpt' : null, settings.precision].filter((x) => x !== null)
  return `batch ${settings.microBatch}x${settings.gradAccum}${settings.gpus > 1 ? `x${settings.gpus}` : ''}=${settings.effectiveBatch}${extras.length > 0 ? ` ${extras.join(' ')}` : ''}`
}

function progressText(p: ProgressSnapshot): string {
  const parts = [
    `step ${p.step ?? '?'}${p.totalSteps !== null ? `/${p.totalSteps}` : ''}`,
    p.loss !== null ? `loss ${p.loss.toFixed(4)}` : null,
    p.tokensPerSecond !== null ? `${formatCount(p.tokensPerSecond)} tok/s` : null,
    p.samplesPerSecond !== null ? `${formatCount(p.samplesPerSecond)} samples/s` : null,
    p.stepSeconds !== null ? `${formatCount(p.stepSeconds)} s/step` : null,
    p.etaSeconds !== null ? `ETA ${formatDuration(p.etaSeconds)}` : null,
  ]
  return parts.filter((x) => x !== null).join('  ')
}

function hostText(sample: Sample | null): string {
  if (sample === null) return 'CPU ?  RAM ?'
  const cpu = sample.cpu ? `CPU ${Math.round(sample.cpu.utilizationPercent)}%` : 'CPU ?'
  const ram = sample.memory
    ? `RAM ${formatGiB(sample.memory.usedBytes)}/${formatGiB(sample.memory.totalBytes)} GiB`
    : 'RAM ?'
  const battery = sample.battery
    ? sample.battery.onBattery
      ? `on battery ${sample.battery.percent ?? '?'}%`
      : `AC (battery ${sample.battery.percent ?? '?'}%)`
    : null
  return [cpu, ram, battery].filter((x) => x !== null).join('  ')
}

function gpuLines(state: ViewState): string[] {
  const sample = state.sample
  if (sample === null || sample.gpus.length === 0)
    return [sample?.gpuSource === 'none' ? 'GPU  none sampled' : 'GPU  waiting for readings']
  return sample.gpus.map((gpu) => {
    const used = gpu.memoryUsedBytes
    const total = gpu.memoryTotalBytes
    const inUse = state.inUse === null || state.inUse.includes(gpu.index)
    const plan = inUse && state.predictedBytes !== null ? ` plan ${formatGiB(state.predictedBytes)}` : ''
    const fraction = used !== null && total !== null && total > 0 ? used / total : 0
    const power =
      gpu.powerWatts !== null
        ? `${Math.round(gpu.powerWatts)}${gpu.powerLimitWatts !== null ? `/${Math.round(gpu.powerLimitWatts)}` : ''} W`
        : '? W'
    return [
      `GPU${gpu.index}${inUse ? '' : ' (idle)'} ${gpu.name}`,
      `mem ${formatGiB(used)}/${formatGiB(total)} GiB ${bar(fraction)}${plan}`,
      `util ${gpu.utilizationPercent ?? '?'}%`,
      `${gpu.temperatureC ?? '?'}°C`,
      power,
      sample.gpusFresh ? null : '(stale)',
    ]
      .filter((x) => x !== null)
      .join('  ')
  })
}

/** The multi-line live view (a terminal redraws it in place). */
export function renderStatusLines(state: ViewState): string[] {
  const status = state.pausedBy.length > 0 ? `PAUSED: ${state.pausedBy.join('; ')}` : 'running'
  const head = [
    'rigfit monitor',
    `attempt ${state.attempt}/${state.maxAttempts}`,
    formatDuration(state.elapsedSeconds),
    status,
    settingsText(state.settings),
  ]
  return [
    head.filter((x) => x !== '').join('  '),
    ...gpuLines(state),
    hostText(state.sample),
    progressText(state.progress),
  ]
}

/** One line for logs and pipes, printed every few seconds. */
export function renderStatusLine(state: ViewState): string {
  const gpus = (state.sample?.gpus ?? [])
    .filter((gpu) => state.inUse === null || state.inUse.includes(gpu.index))
    .map(
      (gpu) =>
        `GPU${gpu.index} ${formatGiB(gpu.memoryUsedBytes)}/${formatGiB(gpu.memoryTotalBytes)} GiB${state.predictedBytes !== null ? ` (plan ${formatGiB(state.predictedBytes)})` : ''} ${gpu.utilizationPercent ?? '?'}% ${gpu.temperatureC ?? '?'}°C ${gpu.powerWatts !== null ? Math.round(gpu.powerWatts) : '?'} W`,
    )
  const head = `[rigfit] ${formatDuration(state.elapsedSeconds)} attempt ${state.attempt}${state.pausedBy.length > 0 ? ' PAUSED' : ''}`
  return [head, progressText(state.progress), ...gpus, hostText(state.sample)].join(' | ')
}
