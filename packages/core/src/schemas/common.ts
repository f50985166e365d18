import { z } from 'zod'
import { isPrintable } from '../printable.js'

/** Byte counts are integers: they are what allocators and nvidia-smi report. */
export const Bytes = z.number().int().nonnegative()

export const Precision = z.enum(['fp32', 'fp16-mixed', 'bf16-mixed', 'fp16-true', 'bf16-true'])
export type Precision = z.infer<typeof Precision>

export const Optimizer = z.enum(['adamw', 'adamw-8bit', 'adafactor', 'sgd', 'sgd-momentum'])
export type Optimizer = z.infer<typeof Optimizer>

export const Attention = z.enum(['eager', 'sdpa', 'flash'])
export type Attention = z.infer<typeof Attention>

export const Sharding = z.enum(['none', 'zero1', 'zero2', 'zero3', 'fsdp'])
export type Sharding = z.infer<typeof Sharding>

export const Offload = z.enum(['none', 'optimizer', 'all'])
export type Offload = z.infer<typeof Offload>

export const Quantization = z.enum(['none', 'int8', 'nf4'])
export type Quantization = z.infer<typeof Quantization>

export const Mode = z.enum(['conservative', 'balanced', 'extreme'])
export type Mode = z.infer<typeof Mode>

export const GpuVendor = z.enum(['nvidia', 'amd', 'intel', 'apple', 'other'])
export type GpuVendor = z.infer<typeof GpuVendor>

/** Plugin families: one bundled rule pack per family. */
export const Family = z.enum([
  'rtx50',
  'rtx40',
  'rtx30',
  'rtx20',
  'datacenter',
  'rdna',
  'apple',
  'cpu',
  'intel',
  'unknown',
])
export type Family = z.infer<typeof Family>

export const Backend = z.enum(['nccl', 'rccl', 'gloo', 'mps', 'none'])
export type Backend = z.infer<typeof Backend>

export const DeviceKind = z.enum(['cuda', 'rocm', 'mps', 'xpu', 'cpu'])
export type DeviceKind = z.infer<typeof DeviceKind>

/** Support level of a numeric format on a device. */
export const Support = z.enum(['yes', 'no', 'emulated', 'unknown'])
export type Support = z.infer<typeof Support>

/**
 * Text a file gives rigfit to show people on one line (a description, a reason, a case name): no control
 * characters, so nothing in it can act on the terminal or start a line that looks like rigfit's own.
 */
export function oneLineText(max: number) {
  return z
    .string()
    .min(1)
    .max(max)
    .refine((text) => isPrintable(text) && !/[\n\t]/.test(text), {
      message:
        'must be one line of plain text: no control characters (escape sequences, carriage returns, newlines, tabs)',
    })
}
