/**
 * DataLoader settings: about one worker per 3 GB of device memory (the rule of thumb of the hardware guide:
 * 24 GB -> 8, 12 GB -> 4), capped by the cores left after the training process's own thread, at least 1 on a
 * GPU. CPU-only training gives the cores to the compute threads and loads in the main process or one worker.
 */
export interface DataloaderInput {
  deviceMemoryBytes: number
  usableCores: number
  gpusPerNode: number
  cpuOnly: boolean
  pinMemoryAllowed: boolean
}

export interface DataloaderSettings {
  workers: number
  pinMemory: boolean
  prefetchFactor: number | null
  persistentWorkers: boolean
}

const BYTES_PER_WORKER = 3e9

export function planDataloader(input: DataloaderInput): DataloaderSettings {
  if (input.cpuOnly) {
    const workers = input.usableCores >= 8 ? 2 : input.usableCores >= 4 ? 1 : 0
    return {
      workers,
      pinMemory: false,
      prefetchFactor: workers > 0 ? 2 : null,
      persistentWorkers: workers > 0,
    }
  }
  const byMemory = Math.max(1, Math.round(input.deviceMemoryBytes / BYTES_PER_WORKER))
  const coresPerProcess = Math.max(1, Math.floor(input.usableCores / Math.max(1, input.gpusPerNode)) - 1)
  const workers = Math.max(1, Math.min(byMemory, coresPerProcess, 16))
  return { workers, pinMemory: input.pinMemoryAllowed, prefetchFactor: 2, persistentWorkers: true }
}
