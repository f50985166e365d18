import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { measureDisk } from '../src/bench/disk.js'
import { measureMemoryBandwidth } from '../src/bench/memory-bandwidth.js'
import { measureDownload } from '../src/bench/network.js'

const MIB = 1024 * 1024

describe('benchmarks', () => {
  it('memory bandwidth: a positive median no larger than the best pass', async () => {
    const fractions: number[] = []
    const result = await measureMemoryBandwidth({
      bufferBytes: 16 * MIB,
      maxPasses: 4,
      onProgress: (f) => fractions.push(f),
    })
    expect(result.passes).toBe(4)
    expect(result.gbs).toBeGreaterThan(0)
    expect(result.gbs).toBeLessThanOrEqual(result.bestGBs)
    expect(fractions.at(-1)).toBe(1)
  })

  it('disk: writes, reads back and removes its file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rigfit-disk-'))
    try {
      const result = await measureDisk({ dir, sizeBytes: 8 * MIB })
      expect(result.bytesWritten).toBe(8 * MIB)
      expect(result.writeMBs).toBeGreaterThan(0)
      if (result.direct) expect(result.bytesRead).toBe(8 * MIB)
      else expect(result.readMBs).toBeNull()
      expect(await readdir(dir)).toEqual([])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('network: measured against a local target, "offline" when the target is unreachable', async () => {
    const chunk = Buffer.alloc(256 * 1024, 7)
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/octet-stream' })
      for (let i = 0; i < 8; i += 1) response.write(chunk)
      response.end()
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      const measured = await measureDownload(`http://127.0.0.1:${port}/blob`, 2000)
      expect(measured).toMatchObject({ status: 'measured', bytes: 8 * 256 * 1024, error: null })
      expect(measured.downloadMbps).toBeGreaterThan(0)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
    const offline = await measureDownload(`http://127.0.0.1:${port}/blob`, 1000)
    expect(offline).toMatchObject({ status: 'offline', downloadMbps: null })
    expect(offline.error).toMatch(/ECONNREFUSED|fetch failed/)
  })
})
