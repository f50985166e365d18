import { type TrainingPlan, worldSize } from '@rigfit/core'
import { type ExportedFacts, halfOf } from './read-back.js'

/** A fact of the plan that an export may leave unstated. */
export type UnstatedFact =
  | 'worldSize'
  | 'precision'
  | 'distribution'
  | 'loraAlpha'
  | 'loraDropout'
  | 'loraTargets'
  | 'quantComputeDtype'
  | 'quantDoubleQuant'
  | 'loadDtype'

/**
 * The format/fact pairs docs/export.md ("What a format leaves to another") says a format does not state; every
 * other fact must be read back from every format's files. `distribution` is unstated only for one process or
 * DDP, which the launcher starts.
 */
export const UNSTATED_FACTS: Readonly<Record<string, readonly UnstatedFact[]>> = {
  hf: ['worldSize', 'precision', 'distribution'],
  kconfig: ['loraTargets', 'quantComputeDtype', 'quantDoubleQuant', 'loadDtype'],
  rigfit: ['loraAlpha', 'loraDropout', 'loraTargets', 'quantComputeDtype', 'quantDoubleQuant', 'loadDtype'],
  // The launchers run the example trainer on the bundled plan, which loads the model as the plan says.
  accelerate: ['loadDtype'],
  deepspeed: ['loadDtype'],
  torchrun: ['loadDtype'],
  slurm: ['loadDtype'],
}

/**
 * What the plan means for a framework, restated from the plan's settings: ZeRO stage and offload devices, or FSDP,
 * DDP or one process. The DeepSpeed format writes every FSDP plan as ZeRO-3.
 */
export function expectedEngine(plan: TrainingPlan, format: string): NonNullable<ExportedFacts['engine']> {
  const s = plan.settings
  const [optimizer, params] = (
    {
      none: ['none', 'none'],
      optimizer: ['cpu', 'none'],
      all: ['cpu', 'cpu'],
      nvme: ['nvme', 'nvme'],
    } as Record<string, [string, string]>
  )[s.offload] as [string, string]
  if (s.strategy === 'zero' || s.strategy === 'zero-offload')
    return { kind: 'deepspeed', stage: Number(s.sharding.slice(4)), optimizer, params }
  if (s.strategy === 'fsdp') {
    // The planner never plans FSDP with optimizer-only offload (FSDP cannot run it): every format but the
    // DeepSpeed one, which speaks only ZeRO, writes the FSDP the plan prints.
    if (format === 'deepspeed') return { kind: 'deepspeed', stage: 3, optimizer, params }
    return { kind: 'fsdp', stage: 0, optimizer, params }
  }
  if (format === 'deepspeed') return { kind: 'deepspeed', stage: 0, optimizer: 'none', params: 'none' }
  const kind = s.strategy !== 'model-split' && worldSize(s) > 1 ? 'ddp' : 'local'
  return { kind, stage: 0, optimizer: 'none', params: 'none' }
}

const DTYPE: Record<string, string> = { bf16: 'bfloat16', fp16: 'float16' }

/**
 * Differences between what a format's files say and what the plan means; empty when they agree. A fact read
 * back as null is a difference unless UNSTATED_FACTS lists it for the format.
 */
export function exportMismatches(plan: TrainingPlan, format: string, f: ExportedFacts): string[] {
  const s = plan.settings
  const unstated = new Set(UNSTATED_FACTS[format] ?? [])
  const out: string[] = []
  const same = (what: string, got: unknown, want: unknown) => {
    if (JSON.stringify(got) !== JSON.stringify(want))
      out.push(`${what}: files say ${JSON.stringify(got)}, plan ${JSON.stringify(want)}`)
  }
  /** Compares a fact the format may leave unstated (null) only when the pair is listed. */
  const stated = (fact: UnstatedFact, what: string, got: unknown, want: unknown) => {
    if (got === null && unstated.has(fact)) return
    same(what, got, want)
  }
  same('micro-batch', f.microBatch, s.microBatch)
  same('accumulation', f.gradAccum, s.gradAccum)
  stated('worldSize', 'world size', f.worldSize, worldSize(s))
  same('sequence', f.seq, s.seq)
  same('half type', f.half, halfOf(s.precision))
  stated('precision', 'precision', f.precision, s.precision)
  if (f.layout)
    same('strategy/sharding/offload', f.layout, {
      strategy: s.strategy,
      sharding: s.sharding,
      offload: s.offload,
    })
  const engine = expectedEngine(plan, format)
  const launcherOnly = engine.kind === 'local' || engine.kind === 'ddp'
  if (f.engine) same('engine', f.engine, engine)
  else if (!f.layout && !(unstated.has('distribution') && launcherOnly))
    out.push('the files do not say how the job is distributed')
  if (s.lora === null) same('adapter', f.lora, null)
  else if (!f.lora) out.push(`the ${s.method} adapter is missing`)
  else {
    same('LoRA rank', f.lora.r, s.lora.rank)
    stated('loraAlpha', 'LoRA alpha', f.lora.alpha, 2 * s.lora.rank)
    stated('loraDropout', 'LoRA dropout', f.lora.dropout, 0)
    if (f.lora.targets === null) {
      if (!unstated.has('loraTargets')) out.push('LoRA targets unstated')
    } else if (f.lora.targets.length === 0) out.push('LoRA targets no module')
  }
  if (s.quant === 'none') same('quantization', f.quant, null)
  else if (!f.quant) out.push(`the ${s.quant} quantization is missing`)
  else {
    same('quantization type', f.quant.type, s.quant)
    // int8 has no compute dtype or double quantization to state.
    if (s.quant !== 'int8') {
      const dtype = DTYPE[halfOf(s.precision) ?? ''] ?? 'float32'
      stated('quantComputeDtype', 'compute dtype', f.quant.computeDtype, dtype)
      stated('quantDoubleQuant', 'double quantization', f.quant.doubleQuant, true)
    }
  }
  same('base model', f.baseModel, plan.workload.kind === 'finetune' ? plan.model.name : null)
  // A frozen base is priced in the compute half type, as are a pure-half plan's weights; trained weights under
  // autocast and fp32 plans load in fp32.
  const loadHalf = s.lora !== null || s.precision.endsWith('-true') ? halfOf(s.precision) : null
  stated('loadDtype', 'load dtype', f.loadDtype, DTYPE[loadHalf ?? ''] ?? 'float32')
  return out
}
