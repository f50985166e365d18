import { z } from 'zod'
import { Bytes } from './common.js'

/** The `rigfit estimate --json` contract (field names are public). */
export const MemoryBreakdown = z.object({
  weights: Bytes,
  gradients: Bytes,
  optimizer: Bytes,
  activations: Bytes,
  logits: Bytes,
  other: Bytes,
  /** What torch.cuda.max_memory_allocated() would report. */
  peakAllocated: Bytes,
  /** What the caching allocator holds at the peak (torch.cuda.max_memory_reserved()). */
  reserved: Bytes,
  cudaContext: Bytes,
  /** What nvidia-smi would show for the process: reserved plus context. */
  total: Bytes,
})
export type MemoryBreakdown = z.infer<typeof MemoryBreakdown>

export const Throughput = z.object({
  tokensPerSecond: z.number().nonnegative(),
  tokensPerSecondPerDevice: z.number().nonnegative(),
  stepSeconds: z.number().nonnegative(),
  mfu: z.number().nonnegative(),
})
export type Throughput = z.infer<typeof Throughput>

export const EstimateResult = z.object({
  params: z.object({ total: z.number().int().nonnegative(), trainable: z.number().int().nonnegative() }),
  perDevice: MemoryBreakdown,
  host: z.object({ total: Bytes }),
  fits: z.boolean().nullable(),
  capacity: Bytes.nullable(),
  throughput: Throughput.nullable(),
})
export type EstimateResult = z.infer<typeof EstimateResult>
