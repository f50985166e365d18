import { hasFlashAttention } from '../device/capabilities.js'
import type { Attention, Optimizer, Precision } from '../schemas/common.js'
import type { SettingPins } from '../schemas/workload.js'
import type { DecisionReader } from './decided.js'
import type { TrainingDevices } from './training-devices.js'

/** The numeric settings the search holds fixed: number format, attention kernel, optimizer step, TF32. */
export interface ComputeSettings {
  precision: Precision
  attention: Attention
  /** The optimizer the packs prefer; the search may trade AdamW for 8-bit states, so it is traced after it. */
  optimizer: Optimizer
  fusedOptimizer: boolean
  tf32: boolean
  /** torch.compile, as the packs prefer it; traced with the runtime settings, but it shapes every candidate's speed. */
  compile: boolean
}

/** Resolves them from the packs (or the device's defaults), tracing each but the optimizer. */
export function computeSettings(
  reader: DecisionReader,
  devices: TrainingDevices,
  pins: SettingPins = {},
): ComputeSettings {
  const precision = choosePrecision(reader, devices)
  const attention = reader.resolve<Attention>(
    'attention',
    hasFlashAttention(devices) && precision !== 'fp32' ? 'flash' : 'sdpa',
    'FlashAttention needs an Ampere or newer NVIDIA GPU and 16-bit activations; elsewhere PyTorch SDPA',
    { computeCapability: devices.computeCapability, precision },
  )
  const decided = reader.value<Optimizer>('optimizer')
  const optimizer =
    pins.optimizer ??
    (decided !== undefined && !reader.forbidden('optimizer', decided)
      ? decided
      : (reader.allowed<Optimizer>('optimizer', ['adamw', 'adafactor', 'sgd-momentum'])[0] ?? 'adamw'))
  const fusedOptimizer = reader.resolve<boolean>(
    'fusedOptimizer',
    devices.kind === 'cuda',
    'fused AdamW kernels exist on CUDA',
  )
  const tf32 = reader.resolve<boolean>(
    'tf32',
    devices.estimateDevice.tf32,
    'TF32 matmuls where the GPU supports them',
  )
  const compile = reader.preferred('compile', devices.kind !== 'cpu' && devices.kind !== 'mps')
  return { precision, attention, optimizer, fusedOptimizer, tf32, compile }
}

function choosePrecision(reader: DecisionReader, devices: TrainingDevices): Precision {
  const device = devices.estimateDevice
  const fallback: Precision =
    devices.kind === 'cpu'
      ? device.bf16
        ? 'bf16-mixed'
        : 'fp32'
      : device.bf16
        ? 'bf16-mixed'
        : device.fp16TensorTflops !== null || devices.kind === 'mps'
          ? 'fp16-mixed'
          : 'fp32'
  const allowed = reader.allowed<Precision>('precision', [fallback, 'bf16-mixed', 'fp16-mixed', 'fp32'])
  return reader.resolve<Precision>(
    'precision',
    allowed[0] ?? 'fp32',
    'bf16 where the device has it, fp16 with loss scaling on tensor cores, fp32 otherwise',
    {
      bf16: device.bf16,
      fp16TensorTflops: device.fp16TensorTflops,
    },
  )
}
