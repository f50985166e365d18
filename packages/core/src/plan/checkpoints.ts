/**
 * Checkpoint cadence and disk: save often enough that a crash loses little, rarely enough that saving costs
 * little (about every 30 minutes for runs over 2 h, at least 10 checkpoints per run for shorter ones), and
 * keep the mode's number of copies. A full checkpoint holds weights and optimizer states.
 */
export interface CheckpointInput {
  totalHours: number
  /** Bytes of one checkpoint: trainable weights + optimizer states + frozen weights once for full saves. */
  checkpointBytes: number
  kept: number
  /** Dataset cache on the same disk. */
  datasetCacheBytes: number
  diskFreeBytes: number | null
}

export interface CheckpointPlan {
  intervalMinutes: number
  sizeBytes: number
  kept: number
  diskNeededBytes: number
  diskFreeBytes: number | null
  fitsOnDisk: boolean | null
}

export function planCheckpoints(input: CheckpointInput): CheckpointPlan {
  const totalMinutes = Math.max(1, input.totalHours * 60)
  const interval = Math.min(30, Math.max(5, totalMinutes / 10))
  const diskNeededBytes = input.checkpointBytes * input.kept + input.datasetCacheBytes
  return {
    intervalMinutes: Math.round(interval),
    sizeBytes: Math.round(input.checkpointBytes),
    kept: input.kept,
    diskNeededBytes: Math.round(diskNeededBytes),
    diskFreeBytes: input.diskFreeBytes,
    fitsOnDisk: input.diskFreeBytes === null ? null : diskNeededBytes <= input.diskFreeBytes,
  }
}
