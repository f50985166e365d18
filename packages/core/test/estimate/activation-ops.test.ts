import { describe, expect, it } from 'vitest'
import { geluActivationOps } from '../../src/estimate/activation-ops.js'
import { type ActivationContext, blockActivationBytes } from '../../src/estimate/activations.js'
import { eagerElementwiseBytes } from '../../src/estimate/elementwise.js'
import { forwardKernelsPerBlock } from '../../src/estimate/kernels.js'
import { MODEL_CATALOG } from '../../src/model/catalog.js'
import { modelSpecFromHfConfig } from '../../src/model/hf-config.js'
import { StackName } from '../../src/schemas/index.js'
import { resolveStack } from '../../src/stack/resolve-stack.js'
import { CURRENT_STACK_VERSION } from '../../src/stack/stack-table.js'

const context = (elementBytes: number, pythonActivations: boolean): ActivationContext => ({
  elementBytes,
  residualBytes: 4,
  attention: 'sdpa',
  fullTraining: true,
  lora: null,
  pythonActivations,
})

describe("a model's own activation code", () => {
  it('keeps the expression’s extra tensors of the MLP width, moves their bytes and launches their kernels', () => {
    for (const spec of MODEL_CATALOG) {
      const ops = geluActivationOps(spec, true)
      const gelu = spec.mlp === 'gelu'
      const topK = spec.experts?.topK ?? 1
      for (const e of [2, 4]) {
        const kept =
          blockActivationBytes(spec, context(e, true), 1024) -
          blockActivationBytes(spec, context(e, false), 1024)
        expect(kept, spec.id).toBe(gelu ? (ops.savedTensors - 1) * spec.ffn * e * topK : 0)
        const ctx = { elementBytes: e, residualBytes: 4, attention: 'sdpa', lora: null } as const
        const moved =
          eagerElementwiseBytes(spec, { ...ctx, pythonActivations: true }, 1024) -
          eagerElementwiseBytes(spec, { ...ctx, pythonActivations: false }, 1024)
        // Forward and backward: three times the forward's traffic.
        expect(moved, spec.id).toBe(gelu ? 3 * (ops.forwardTraffic - 2) * e * spec.ffn * topK : 0)
      }
      const kernels =
        forwardKernelsPerBlock(spec, true, false, true) - forwardKernelsPerBlock(spec, true, false, false)
      expect(kernels, spec.id).toBe(gelu ? (ops.kernels - 1) * (spec.experts?.count ?? 1) : 0)
    }
  })

  it("is GPT-2's and Phi's gelu_new where a config names none, and whatever activation a config names", () => {
    expect(MODEL_CATALOG.filter((m) => m.activation !== 'fused').map((m) => m.modelType)).not.toHaveLength(0)
    for (const spec of MODEL_CATALOG) {
      expect(spec.activation, spec.id).toBe(['gpt2', 'phi'].includes(spec.modelType) ? 'gelu-new' : 'fused')
    }
    const gpt2 = {
      model_type: 'gpt2',
      n_embd: 256,
      n_layer: 2,
      n_head: 4,
      vocab_size: 1000,
      n_positions: 128,
    }
    const named: Record<string, string> = {
      gelu_new: 'gelu-new',
      gelu_fast: 'gelu-fast',
      gelu: 'fused',
      gelu_pytorch_tanh: 'fused',
      relu: 'fused',
    }
    for (const [name, activation] of Object.entries(named)) {
      expect(
        modelSpecFromHfConfig({ ...gpt2, activation_function: name }, 'config.json').activation,
        name,
      ).toBe(activation)
    }
    expect(modelSpecFromHfConfig(gpt2, 'config.json').activation).toBe('gelu-new')
  })

  it('runs where the stack runs Transformers’ modelling code (hf, NeMo AutoModel), and is fused elsewhere', () => {
    for (const name of StackName.options) {
      const { mechanisms, facts } = resolveStack({ name, version: CURRENT_STACK_VERSION[name] })
      expect(mechanisms.pythonActivations, name).toBe(name === 'hf' || name === 'nemo')
      expect(facts.pythonActivations.source, name).toMatch(/^https:\/\//)
    }
  })
})
