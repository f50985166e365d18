import {
  deviceFromCatalogEntry,
  EstimateInput,
  EstimateResult,
  estimate,
  fitVerdict,
  MODEL_CATALOG,
  runKind,
} from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { bundledCatalogEntries } from './helpers/bundled-plugins.js'
import { rigfit, rigfitJson } from './helpers/run-cli.js'

const decoders = MODEL_CATALOG.filter((model) => model.kind === 'decoder')
const gpus = bundledCatalogEntries()

// Blocks backward frees that the optimizer step cannot use stay cached (nvidia-smi shows them), but the allocator
// releases them when a request finds the device full: they count in the total, never in the verdict.
describe('the releasable cache, over every catalog decoder and catalog GPU', () => {
  it('counts in the total but not in the verdict or the headroom, and never overflows the device', () => {
    let cached = 0
    for (const entry of gpus) {
      const device = deviceFromCatalogEntry(entry)
      for (const model of decoders)
        for (const lora of [null, { rank: 16, alpha: 32, targets: ['q', 'k', 'v', 'o'] }])
          for (const [microBatch, seq] of [
            [1, 512],
            [1, 2048],
            [4, 1024],
          ] as const) {
            const input = EstimateInput.parse({
              model,
              device,
              lora,
              microBatch,
              seq,
              precision: device.bf16 ? 'bf16-mixed' : 'fp16-mixed',
            })
            const result = estimate(input)
            const d = result.perDevice
            const where = `${model.id} ${entry.id} ${lora ? 'lora' : 'full'} ${microBatch}x${seq}`
            const needed = d.total - d.releasable
            expect(d.releasable, where).toBeGreaterThanOrEqual(0)
            expect(needed, where).toBeGreaterThanOrEqual(
              d.peakAllocated + d.cudaContext + d.communication - 1,
            )
            expect(
              Math.abs((result.headroom as number) - (device.vramBytes - needed)),
              where,
            ).toBeLessThanOrEqual(1)
            expect(result.verdict, where).toBe(fitVerdict(needed, device.vramBytes, runKind(input)).verdict)
            if (d.releasable > 0) {
              cached += 1
              // Only PyTorch's segment-caching allocators (CUDA, HIP, XPU) keep freed segments; MPS does not.
              expect(['cuda', 'rocm', 'xpu'], where).toContain(device.kind)
              // Frozen bases train adapters whose gradients fit in any freed block.
              expect(lora, where).toBeNull()
              expect(d.total, where).toBeLessThanOrEqual(device.vramBytes + 1)
            }
          }
    }
    expect(cached).toBeGreaterThan(0)
  })

  it('is in `rigfit estimate --json`, and read back as 0 from results written before it', () => {
    const result = rigfitJson([
      'estimate',
      '--model',
      'llama-3.2-1b',
      '--gpu',
      'H100',
      '--seq',
      '512',
      '--micro-batch',
      '1',
      '--json',
    ])
    expect(result.perDevice.releasable).toBeGreaterThan(0)
    expect(result.headroom).toBe(result.capacity - (result.perDevice.total - result.perDevice.releasable))
    const { releasable: _, ...before } = result.perDevice
    expect(EstimateResult.parse({ ...result, perDevice: before }).perDevice.releasable).toBe(0)
  })

  it('shows in a plan that keeps one, in its JSON and on its memory line', () => {
    const args = [
      'plan',
      '--gpu',
      'H100 SXM5 80GB',
      '--model',
      'llama-3.2-3b',
      '--method',
      'full',
      '--seq',
      '512',
      '--micro-batch',
      '1',
      '--grad-accum',
      '1',
      '--time-budget',
      '10m',
    ]
    const plan = rigfitJson([...args, '--json'])
    const cached = plan.memory.perDevice.releasable
    expect(cached).toBeGreaterThan(0)
    expect(plan.memory.perDevice.total).toBeLessThanOrEqual(plan.memory.capacityBytes)
    const text = rigfit([...args, '--no-color'])
    expect(text.status).toBe(0)
    expect(text.stdout).toContain(
      `(${(cached / 2 ** 30).toFixed(2)} GiB of it cache released when the GPU fills)`,
    )
  })
})
