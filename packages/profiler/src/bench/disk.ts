import { randomBytes } from 'node:crypto'
import { constants, type FileHandle, open, rm } from 'node:fs/promises'
import { join } from 'node:path'

export interface DiskBenchmarkResult {
  /** Sequential write in MB/s (10^6 bytes/s), including the final fsync. */
  writeMBs: number | null
  /** Sequential read in MB/s; null when the page cache could not be bypassed (then a read measures RAM). */
  readMBs: number | null
  bytesWritten: number
  bytesRead: number
  direct: boolean
  method: string
}

export interface DiskBenchmarkOptions {
  dir: string
  sizeBytes?: number
  blockBytes?: number
  writeBudgetMs?: number
  readBudgetMs?: number
  onProgress?: (stage: 'write' | 'read', fraction: number) => void
}

const MIB = 1024 * 1024

/**
 * Sequential write then read of a temporary file in `dir`, 1 MiB blocks, as fio with `--rw=write|read --bs=1M
 * --direct=1 --ioengine=psync --end_fsync=1`. O_DIRECT bypasses the page cache on both passes; Node cannot
 * ask for an aligned buffer, so one is found by trying offsets into a larger one (a misaligned O_DIRECT write
 * fails with EINVAL at once). Where the filesystem refuses O_DIRECT (tmpfs, some FUSE), writes are buffered and
 * timed up to the end of fsync — the data is then on the device — and the read figure is left out, because a
 * read of just-written data would measure the page cache. The file is removed afterwards.
 */
export async function measureDisk(options: DiskBenchmarkOptions): Promise<DiskBenchmarkResult> {
  const sizeBytes = options.sizeBytes ?? 256 * MIB
  const blockBytes = options.blockBytes ?? MIB
  const path = join(options.dir, `.rigfit-bench-${process.pid}-${randomBytes(4).toString('hex')}.tmp`)
  const direct = 'O_DIRECT' in constants ? (constants as { O_DIRECT: number }).O_DIRECT : 0
  const pool = Buffer.allocUnsafeSlow(blockBytes + 4096).fill(0xa5)
  try {
    let writer = direct
      ? await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | direct, 0o600).catch(
          () => null,
        )
      : null
    const block = writer ? await findAlignedBlock(writer, pool, blockBytes) : null
    const usingDirect = writer !== null && block !== null
    if (!usingDirect) {
      await writer?.close()
      writer = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, 0o600)
    }
    const buffer = block ?? pool.subarray(0, blockBytes)
    const written = await timedLoop(
      sizeBytes,
      blockBytes,
      options.writeBudgetMs ?? 3000,
      async (position) => {
        await (writer as FileHandle).write(buffer, 0, blockBytes, position)
        options.onProgress?.('write', position / sizeBytes)
      },
      async () => {
        await (writer as FileHandle).sync()
      },
    )
    await (writer as FileHandle).close()
    let read = { bytes: 0, seconds: 0 }
    if (usingDirect) {
      const reader = await open(path, constants.O_RDONLY | direct)
      try {
        read = await timedLoop(written.bytes, blockBytes, options.readBudgetMs ?? 2500, async (position) => {
          await reader.read(buffer, 0, blockBytes, position)
          options.onProgress?.('read', position / written.bytes)
        })
      } finally {
        await reader.close()
      }
    }
    return {
      writeMBs: rate(written.bytes, written.seconds),
      readMBs: usingDirect ? rate(read.bytes, read.seconds) : null,
      bytesWritten: written.bytes,
      bytesRead: read.bytes,
      direct: usingDirect,
      method: usingDirect
        ? `sequential ${blockBytes / MIB} MiB blocks with O_DIRECT, ${Math.round(written.bytes / MIB)} MiB written (ending with fsync) and read back, in ${options.dir}`
        : `sequential ${blockBytes / MIB} MiB buffered writes timed to the end of fsync, ${Math.round(written.bytes / MIB)} MiB in ${options.dir}; read not measured: the filesystem refuses O_DIRECT, so a read would hit the page cache`,
    }
  } finally {
    await rm(path, { force: true })
  }
}

/** Writes the first block at offsets 0, 16, 32, ... until the kernel accepts the buffer's alignment. */
async function findAlignedBlock(
  handle: FileHandle,
  pool: Buffer,
  blockBytes: number,
): Promise<Buffer | null> {
  for (let offset = 0; offset < 4096; offset += 16) {
    const candidate = pool.subarray(offset, offset + blockBytes)
    try {
      await handle.write(candidate, 0, blockBytes, 0)
      return candidate
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EINVAL') return null
    }
  }
  return null
}

async function timedLoop(
  totalBytes: number,
  blockBytes: number,
  budgetMs: number,
  step: (position: number) => Promise<void>,
  finish?: () => Promise<void>,
): Promise<{ bytes: number; seconds: number }> {
  const started = performance.now()
  let position = 0
  while (position + blockBytes <= totalBytes) {
    await step(position)
    position += blockBytes
    if (performance.now() - started > budgetMs) break
  }
  await finish?.()
  return { bytes: position, seconds: (performance.now() - started) / 1000 }
}

function rate(bytes: number, seconds: number): number | null {
  return bytes > 0 && seconds > 0 ? Math.round(bytes / seconds / 1e6) : null
}
