import { optimizerStepOn } from '../estimate/optimizer-step-device.js'
import { pointEstimateInput } from '../plan/training-point.js'
import { type EstimateDevice, EstimateInput, type EstimateSettings } from '../schemas/estimate.js'
import type { ModelSpec } from '../schemas/model-spec.js'
import type { StackMechanisms } from '../schemas/stack.js'
import type { StackOverrides } from './stack-fields.js'

export interface UserEstimateRequest {
  model: ModelSpec
  device: EstimateDevice | null
  /** What the user typed; what it leaves out, the stack decides. */
  settings: EstimateSettings
  stack: StackMechanisms
  /** The mechanism flags given on top of the stack. */
  overrides?: StackOverrides
}

/**
 * The estimate input for what a user types: `rigfit estimate --stack …` and every validation row go through this
 * one function, so a row is scored exactly as the CLI would estimate it. Compile, TF32, the optimizer step and the
 * attention kernel are the stack's defaults unless the settings name them; the mechanism flags override last.
 */
export function userEstimateInput(request: UserEstimateRequest): EstimateInput {
  const { model, device, settings, stack } = request
  const gpus = settings.gpus ?? 1
  const nodes = settings.nodes ?? 1
  const base = pointEstimateInput(
    {
      model,
      seq: settings.seq,
      microBatch: settings.microBatch,
      gradAccum: settings.gradAccum ?? 1,
      precision: settings.precision ?? 'bf16-mixed',
      optimizer: settings.optimizer ?? 'adamw',
      fusedOptimizer: false,
      gradCheckpointing: settings.gradCheckpointing ?? false,
      attention: settings.attention ?? stack.attention,
      gpus,
      nodes,
      sharding: settings.sharding ?? 'none',
      offload: settings.offload ?? 'none',
      lora: settings.lora ?? null,
      quant: settings.quant ?? 'none',
      tf32: settings.tf32 ?? stack.tf32,
      compile: settings.compile ?? stack.compile,
    },
    device,
    settings.interconnect ?? (gpus * nodes > 1 ? 'unknown' : 'none'),
    stack,
  )
  const optimizerImpl = optimizerStepOn(
    settings.fusedOptimizer === true
      ? 'fused'
      : settings.fusedOptimizer === false && stack.optimizerImpl === 'fused'
        ? 'foreach'
        : stack.optimizerImpl,
    device,
  )
  return EstimateInput.parse({ ...base, optimizerImpl, ...request.overrides })
}
