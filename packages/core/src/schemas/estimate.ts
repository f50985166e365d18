import { z } from 'zod'
import { SpeedCalibration } from './calibration-record.js'
import {
  Attention,
  Bytes,
  DeviceKind,
  Offload,
  Optimizer,
  Precision,
  Quantization,
  Sharding,
} from './common.js'
import { ModelSpec } from './model-spec.js'
import { StackRefText } from './stack.js'

/** Linear layers a LoRA adapter can wrap, named after the Llama projections (GPT-2's c_fc is `up`, c_proj `down`). */
export const LoraTarget = z.enum(['q', 'k', 'v', 'o', 'gate', 'up', 'down'])
export type LoraTarget = z.infer<typeof LoraTarget>

export const LoraSpec = z.object({
  rank: z.number().int().positive(),
  targets: z.array(LoraTarget).min(1),
  /** PEFT's lora_dropout: above 0 each adapted layer keeps its own dropped copy of its input. */
  dropout: z.number().min(0).max(1).default(0),
})
export type LoraSpec = z.infer<typeof LoraSpec>

/** The numbers of one accelerator the model needs (from a GPU catalog entry or a hardware profile). */
export const EstimateDevice = z.object({
  name: z.string().default('device'),
  kind: DeviceKind,
  vramBytes: Bytes,
  /** Dense FP16/BF16 matrix rate with FP32 accumulate (null without matrix units). */
  fp16TensorTflops: z.number().positive().nullable(),
  fp32Tflops: z.number().positive(),
  memoryBandwidthGBs: z.number().positive(),
  bf16: z.boolean().default(true),
  tf32: z.boolean().default(false),
  /** CUDA compute capability (`8.0`), used for the size of the CUDA context; null elsewhere. */
  computeCapability: z.string().nullable().default(null),
})
export type EstimateDevice = z.infer<typeof EstimateDevice>

/** Everything `estimate()` needs; defaults match `rigfit estimate` without flags. */
export const EstimateInput = z.object({
  model: ModelSpec,
  seq: z.number().int().positive(),
  microBatch: z.number().int().positive(),
  gradAccum: z.number().int().positive().default(1),
  precision: Precision.default('bf16-mixed'),
  optimizer: Optimizer.default('adamw'),
  gradCheckpointing: z.boolean().default(false),
  attention: Attention.default('sdpa'),
  /** Data-parallel GPUs per node. */
  gpus: z.number().int().positive().default(1),
  /** Nodes of `gpus` GPUs each: ZeRO shards over every rank of the job, FSDP within a node (hybrid sharding). */
  nodes: z.number().int().positive().default(1),
  /**
   * The link between the GPUs of a node, for the communication cost of data parallelism (`scalingEfficiency`);
   * null counts no communication cost (ideal scaling), as when the interconnect is not known.
   */
  interconnect: z.enum(['nvlink', 'xgmi', 'pcie', 'mixed', 'none', 'unknown']).nullable().default(null),
  sharding: Sharding.default('none'),
  /**
   * FSDP keeps the frozen units it gathers in backward unsharded until the step ends, so a LoRA run holds a whole
   * unsharded copy of the model beside its shard (pytorch/pytorch#95805; measured with PyTorch 2.1's FSDP under
   * LitGPT). Off: every unit is resharded after its backward (FSDP2, and FSDP with the reshard hooks of #101982).
   */
  frozenStaysGathered: z.boolean().default(false),
  offload: Offload.default('none'),
  lora: LoraSpec.nullable().default(null),
  /**
   * The type LoRA adapters train in on a true 16-bit base (fp16-true, bf16-true): `fp32` as PEFT keeps them
   * (`autocast_adapter_dtype=True`, PEFT 0.12 and later; each adapted layer keeps its own fp32 copy of its input),
   * `model` as LitGPT keeps them (the base's 16-bit type). Autocast and fp32 runs train fp32 adapters either way.
   */
  adapterDtype: z.enum(['fp32', 'model']).default('fp32'),
  quant: Quantization.default('none'),
  /**
   * The 4-bit layers keep their inputs for backward, as bitsandbytes did before 0.43.2 (its change #1270, July 2024,
   * stopped keeping them): every quantised linear layer's input stays alive until its backward.
   */
  quantKeepsInputs: z.boolean().default(false),
  device: EstimateDevice.nullable().default(null),
  /**
   * How the optimizer step runs: `foreach` (PyTorch's default on CUDA) keeps one full-size temporary of the
   * state, `fused` (AdamW(fused=True), DeepSpeed, bitsandbytes kernels) none, `per-tensor` (a Python loop over
   * parameters) one temporary the size of the largest tensor.
   */
  optimizerImpl: z.enum(['foreach', 'fused', 'per-tensor']).default('foreach'),
  /** fp32 matmuls on TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32). */
  tf32: z.boolean().default(false),
  /** The model runs under torch.compile: Inductor fuses element-wise kernels, so fewer kernels are launched. */
  compile: z.boolean().default(false),
  /**
   * The loss upcasts 16-bit logits to fp32 before the softmax (Hugging Face's causal-LM loss, `logits.float()`);
   * LitGPT's loss takes them as they are. Under autocast and in fp32 the loss runs in fp32 anyway.
   */
  upcastLogits: z.boolean().default(false),
  /** Fused linear + cross-entropy (Liger, cut cross-entropy): the full logits are never materialised. */
  fusedLoss: z.boolean().default(false),
  /**
   * The cross-entropy runs over this many chunks of the logits (torchtune's CEWithChunkedOutputLoss: 8; LitGPT's
   * 128-position chunks): the loss's gradient temporaries exist for one chunk at a time.
   */
  lossChunks: z.number().int().positive().default(1),
  /**
   * A quantised base's other weights (embeddings, norms, output head) are fp32, as PEFT's
   * prepare_model_for_kbit_training casts them; off, they stay in the training's 16-bit type.
   */
  kbitFp32Casts: z.boolean().default(false),
  /**
   * The flash and SDPA attention kernels are FlashAttention-2's generation, which skips the blocks a causal mask
   * hides (flash-attn 2, PyTorch's SDPA since 2.2); off, the first generation's rate over the whole score matrix.
   */
  flashAttention2: z.boolean().default(true),
  /**
   * The MLP activation runs as the model's own Python expression where it has one (ModelSpec.activation:
   * Transformers' `gelu_new`), op by op; off, as one fused kernel (a framework's own model code).
   */
  pythonActivations: z.boolean().default(false),
  /**
   * The stack runs a mixture of experts outside autocast (Transformers 5's grouped expert GEMMs): experts whose
   * weights train in fp32 under mixed precision multiply in fp32.
   */
  expertsOutsideAutocast: z.boolean().default(false),
  /** `lm`: a vocabulary head over every position; `classification`: a small head on one position (BERT fine-tuning). */
  head: z.enum(['lm', 'classification']).default('lm'),
  /** Measured CUDA context size of the stack (nvidia-smi with one tensor allocated); by GPU generation when null. */
  cudaContextBytes: Bytes.nullable().default(null),
  /** Overrides the calibrated hardware-FLOPs utilisation of matrix multiplies (0–1). */
  matmulEfficiency: z.number().gt(0).max(1).nullable().default(null),
})
export type EstimateInput = z.infer<typeof EstimateInput>

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
  /**
   * The part of `reserved` that is free cached segments the allocator releases when a request finds the device
   * full: blocks backward freed that the optimizer step's requests do not fit. Counted in `total` (nvidia-smi shows
   * it) but not in the fit verdict or the headroom. Absent from plans written before it was counted: read as 0.
   */
  releasable: Bytes.default(0),
  cudaContext: Bytes,
  /**
   * What NCCL (RCCL) holds outside the caching allocator for a job of several ranks: its protocol buffers per
   * channel. Absent from plans written before it was counted, which read as 0.
   */
  communication: Bytes.default(0),
  /** What nvidia-smi would show for the process: reserved plus context plus communication buffers. */
  total: Bytes,
})
export type MemoryBreakdown = z.infer<typeof MemoryBreakdown>

export const FitVerdict = z.enum(['fits', 'borderline', 'does-not-fit'])
export type FitVerdict = z.infer<typeof FitVerdict>

/** Kinds of run the validation error bands are kept for. */
export const RunKind = z.enum([
  'full',
  'lora',
  'qlora',
  'full-multi-gpu',
  'lora-multi-gpu',
  'qlora-multi-gpu',
])
export type RunKind = z.infer<typeof RunKind>

/**
 * How far the measured memory of this kind of run has been from rigfit's prediction (leave-one-source-out over
 * the validation dataset): the measured nvidia-smi total lies in [low, high] for about 90% of the validated runs the
 * band comes from. A kind with fewer than 20 measured runs takes the band of the kind it pools into.
 */
export const FitConfidence = z.object({
  kind: RunKind,
  /** Measured excess over the prediction at the band's upper quantile (0.18: measured up to 18% above). */
  under: z.number().nonnegative(),
  /** Measured shortfall below the prediction at the band's lower quantile (0.1: measured down to 10% below). */
  over: z.number().nonnegative(),
  /** Validation rows behind the band (the n of `basis`, with every kind pooled under it); at least 20. */
  rows: z.number().int().nonnegative(),
  /** The kind of run the band's rows are: `kind` itself, or the parent it pools into (`all`: every run). */
  basis: z.enum([...RunKind.options, 'all']),
  /** True when `basis` is not `kind`: this kind has too few measured runs for a band of its own. */
  pooled: z.boolean(),
  /** Share of the band's held-out rows whose measurement lies inside it (about 0.9). */
  coverage: z.number().min(0).max(1),
  low: Bytes,
  high: Bytes,
})
export type FitConfidence = z.infer<typeof FitConfidence>

export const Throughput = z.object({
  tokensPerSecond: z.number().nonnegative(),
  tokensPerSecondPerDevice: z.number().nonnegative(),
  stepSeconds: z.number().nonnegative(),
  mfu: z.number().nonnegative(),
})
export type Throughput = z.infer<typeof Throughput>

export const EstimateResult = z.object({
  params: z.object({
    total: z.number().int().nonnegative(),
    trainable: z.number().int().nonnegative(),
    /** Token (and position) embeddings plus an untied output head. */
    embedding: z.number().int().nonnegative(),
  }),
  perDevice: MemoryBreakdown,
  /** Host RAM for offloaded weights, gradients and optimizer states, summed over the GPUs of the job. */
  host: z.object({ total: Bytes }),
  /** True only when the verdict is `fits`: the prediction plus its validation error band is within capacity. */
  fits: z.boolean().nullable(),
  capacity: Bytes.nullable(),
  throughput: Throughput.nullable(),
  /** When the allocation peak happens: at the start of backward (activations) or at the optimizer step. */
  peakPhase: z.enum(['backward', 'optimizer-step']),
  /** How the speed was derived; null when no device was given. */
  speed: z
    .object({
      flopsPerToken: z.number().nonnegative(),
      peakTflops: z.number().nonnegative(),
      /** The share of step time spent in matrix multiplies; the rest is memory traffic and host work. */
      computeShare: z.number().min(0).max(1),
      /**
       * The share of the fitted matmul efficiency this device sustains under load: Hopper's fitted share, a board's
       * published GEMM rate (a power-capped T4, Blackwell, an AMD Instinct, an Apple GPU under MPS), or 1.
       */
      sustainedShare: z.number().positive().max(1),
    })
    .nullable(),
  /**
   * `fits` when the upper end of the kind's error band (`confidence`) stays within capacity, `does-not-fit` when
   * even its lower end exceeds it, `borderline` in between; null without capacity.
   */
  verdict: FitVerdict.nullable(),
  /**
   * Capacity minus what the run needs: the predicted nvidia-smi total less the releasable cache (negative when
   * over); null without capacity.
   */
  headroom: z.number().int().nullable(),
  /** The validation error band behind the verdict; null without capacity. */
  confidence: FitConfidence.nullable(),
  /**
   * How the speed used this machine's calibration store (label, the model's own prediction, factor, records);
   * absent when the store was not read (`--no-calibration`, no speed, or what-if hardware without records).
   */
  calibration: SpeedCalibration.optional(),
  /** The stack the estimate assumed (`rigfit estimate --stack`, default hf); absent from `estimate()` itself. */
  stack: StackRefText.optional(),
})
export type EstimateResult = z.infer<typeof EstimateResult>

/** What a validation row measured: allocator peak, allocator reservation, the process in nvidia-smi, or speed. */
export const ValidationMetric = z.enum([
  'max_memory_allocated',
  'max_memory_reserved',
  'nvidia-smi',
  'tokens_per_second',
  /** The run ran out of memory; `value` is the device memory it had. */
  'oom',
  /** The run fitted (often the largest micro-batch or sequence that did); `value` is the device memory it had. */
  'fits',
])
export type ValidationMetric = z.infer<typeof ValidationMetric>

/** A shape's fields, each optional and without its default. */
type Unstated<T extends Record<string, z.ZodType>> = {
  [K in keyof T]: z.ZodOptional<T[K] extends z.ZodDefault<infer Inner> ? Inner : T[K]>
}

/**
 * The fields made optional with their defaults dropped: zod 4's `.partial()` keeps a field's `.default()`, so a
 * setting left out would read as EstimateInput's default (sdpa attention, no TF32, no compile) where `rigfit
 * estimate` leaves it to the stack.
 */
function unstated<T extends Record<string, z.ZodType>>(shape: T): Unstated<T> {
  return Object.fromEntries(
    Object.entries(shape).map(([key, field]) => [
      key,
      (field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType) : field).optional(),
    ]),
  ) as Unstated<T>
}

/**
 * The training settings a user states (`rigfit estimate`'s flags besides the hardware and the stack): everything
 * else the estimate needs comes from the stack the run uses (`--stack`). `fusedOptimizer`, `compile` and `tf32` are
 * settings a user writes (`optim adamw_torch_fused`, `torch_compile=True`, `tf32=True`); when absent, the stack's
 * default holds.
 */
export const EstimateSettings = z.strictObject({
  seq: EstimateInput.shape.seq,
  microBatch: EstimateInput.shape.microBatch,
  ...unstated(
    EstimateInput.pick({
      gradAccum: true,
      precision: true,
      optimizer: true,
      gradCheckpointing: true,
      attention: true,
      gpus: true,
      nodes: true,
      interconnect: true,
      sharding: true,
      offload: true,
      lora: true,
      quant: true,
      tf32: true,
      compile: true,
    }).shape,
  ),
  fusedOptimizer: z.boolean().optional(),
})
export type EstimateSettings = z.infer<typeof EstimateSettings>

/**
 * One measured training configuration (packages/core/validation/*.jsonl): the model (a catalog id or an inline
 * Hugging Face config), the settings, the GPU, the metric and its value as published, and where it was published.
 */
export const ValidationRow = z.strictObject({
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/),
  model: z.union([
    z.strictObject({ catalog: z.string() }),
    z.strictObject({ config: z.record(z.string(), z.unknown()) }),
  ]),
  // Only what a user types as `rigfit estimate` flags: the stack decides the rest, as it does for the CLI.
  settings: EstimateSettings,
  gpu: EstimateDevice.omit({ vramBytes: true }).extend({ vramGB: z.number().positive() }),
  metric: ValidationMetric,
  /** The figure as published, in `unit`; tokens/s are per device. */
  value: z.number().positive(),
  unit: z.enum(['B', 'MB', 'MiB', 'GB', 'GiB', 'tokens/s/device']),
  /**
   * `published` (paper, documentation, benchmark table) or `calibrate` (rigfit's own measurement: examples/calibrate on
   * the named GPU, or `rigfit calibrate` on the named device).
   */
  origin: z.enum(['published', 'calibrate']),
  source: z.strictObject({
    /** The independent source the row belongs to (one publisher's measurements); leave-one-source-out folds by it. */
    id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
    title: z.string(),
    url: z.string().url(),
    where: z.string(),
    says: z.string(),
  }),
  /** The stack a user would pass as `--stack`, NAME@VERSION, read from the source's own words in `stackSays`. */
  stack: StackRefText,
  /** The software stack as the source states it (framework, PyTorch, CUDA, bitsandbytes versions), or "not stated". */
  stackSays: z.string().min(3),
  notes: z.string().optional(),
})
export type ValidationRow = z.infer<typeof ValidationRow>
