import { z } from 'zod'
import { Bytes, DeviceKind, Precision } from './common.js'

export const CALIBRATION_SCHEMA_VERSION = 1

/**
 * The training settings a speed was measured at: what decides tokens/s on one machine, and what "nearest
 * record" compares (model family and size first, then the shape of the step).
 */
export const CalibrationSettings = z.object({
  /** `llama`, `gpt2`, ...: the model's architecture family. */
  modelFamily: z.string().min(1),
  /** Total parameters of the model that trained. */
  params: z.number().int().positive(),
  seq: z.number().int().positive(),
  microBatch: z.number().int().positive(),
  gradAccum: z.number().int().positive(),
  precision: Precision,
  method: z.enum(['full', 'lora', 'qlora']),
  gradCheckpointing: z.boolean(),
  /** CPU threads per rank (the plan's `threads`); null where the stack chose. */
  threads: z.number().int().positive().nullable(),
  /** GPUs per node (0 on a CPU) and nodes of the job. */
  gpus: z.number().int().nonnegative(),
  nodes: z.number().int().positive(),
})
export type CalibrationSettings = z.infer<typeof CalibrationSettings>

/** The devices a record was measured on; `fingerprint` is what "same machine" compares. */
export const CalibrationDevice = z.object({
  fingerprint: z.string().min(1),
  kind: DeviceKind,
  /** The GPU's name, or the CPU's brand on a CPU. */
  name: z.string(),
  /** GPUs per node, or the CPU's logical cores on a CPU. */
  count: z.number().int().positive(),
})
export type CalibrationDevice = z.infer<typeof CalibrationDevice>

/**
 * One measurement of training speed on this machine, a line of the calibration store
 * (`$XDG_CONFIG_HOME/rigfit/calibration.jsonl`): written by `rigfit calibrate` and by `rigfit monitor` for every
 * supervised run whose trainer reports its speed.
 */
export const CalibrationRecord = z.object({
  schemaVersion: z.literal(CALIBRATION_SCHEMA_VERSION),
  /** When it was measured (ISO 8601). */
  recordedAt: z.string(),
  /** `calibrate`: a timed measurement; `monitor`: the steady state of a supervised run. */
  source: z.enum(['calibrate', 'monitor']),
  device: CalibrationDevice,
  /** The stack that trained: `plain` (rigfit's own trainer), `hf` (Transformers), ...; its version when known. */
  stack: z.object({
    name: z.string().regex(/^[a-z][a-z0-9-]*$/),
    version: z.string().nullable(),
  }),
  /** Software versions the measuring process reported: python, torch, transformers, peft, rigfit. */
  versions: z.record(z.string(), z.string()),
  settings: CalibrationSettings,
  measured: z.object({
    /** Steady-state tokens per second of the whole job. */
    tokensPerSecond: z.number().positive(),
    /** Seconds per optimizer step at that rate. */
    stepSeconds: z.number().positive(),
    /** Optimizer steps timed, and the seconds they took (after warm-up). */
    steps: z.number().int().positive(),
    seconds: z.number().positive(),
    /** torch.cuda.max_memory_allocated() / max_memory_reserved() on a GPU; null where the device has none. */
    peakAllocatedBytes: Bytes.nullable(),
    peakReservedBytes: Bytes.nullable(),
  }),
  /** rigfit's prediction for the same settings when the record was written: the correction is measured / predicted. */
  predicted: z.object({
    tokensPerSecond: z.number().positive(),
    rigfitVersion: z.string(),
  }),
})
export type CalibrationRecord = z.infer<typeof CalibrationRecord>

/** What a speed figure is: read from a measurement of these settings on this machine, or predicted. */
export const SpeedLabel = z.enum(['measured on this machine', 'predicted'])
export type SpeedLabel = z.infer<typeof SpeedLabel>

/** How a plan's or estimate's speed used the calibration store (absent when the store was not read). */
export const SpeedCalibration = z.object({
  label: SpeedLabel,
  /** The model's own prediction before the correction. */
  predictedTokensPerSecond: z.number().nonnegative(),
  /** Corrected / predicted: 1 without matching records; bounded (see `bounds`). */
  factor: z.number().positive(),
  /** How close the records used are: the same settings, the same model family, or only the same device and stack. */
  match: z.enum(['settings', 'family', 'device', 'none']),
  bounds: z.tuple([z.number().positive(), z.number().positive()]),
  records: z.array(
    z.object({
      recordedAt: z.string(),
      source: z.enum(['calibrate', 'monitor']),
      stack: z.string(),
      modelFamily: z.string(),
      params: z.number().int().positive(),
      measuredTokensPerSecond: z.number().positive(),
      predictedTokensPerSecond: z.number().positive(),
    }),
  ),
  /** One sentence: what was used and why. */
  reason: z.string(),
})
export type SpeedCalibration = z.infer<typeof SpeedCalibration>
