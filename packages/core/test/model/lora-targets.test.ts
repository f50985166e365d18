import { describe, expect, it } from 'vitest'
import { RigfitError } from '../../src/errors.js'
import { MODEL_CATALOG } from '../../src/model/catalog.js'
import { SUPPORTED_MODEL_TYPES } from '../../src/model/family-traits.js'
import { ALL_LINEAR, resolveLoraTargets } from '../../src/model/lora-targets.js'
import { countParams } from '../../src/model/params.js'
import { MODULE_LAYOUTS, moduleLayout, peftNames } from '../../src/model/peft-modules.js'
import type { LoraTarget } from '../../src/schemas/estimate.js'
import type { ModelSpec } from '../../src/schemas/model-spec.js'

const RANK = 16
const adapted = (spec: ModelSpec, targets: readonly LoraTarget[]) =>
  countParams(spec, { rank: RANK, targets: [...targets] }).trainable

/**
 * Input and output widths of each Hugging Face block linear, from the modeling code's nn.Linear / Conv1D shapes,
 * written out apart from rigfit's own target widths; fused projections are left out (PEFT puts one adapter of
 * rank x (in + sum of outs) on them, rigfit prices their parts).
 */
function hfShape(spec: ModelSpec, leaf: string): [number, number] | undefined {
  const q = spec.heads * spec.headDim
  const kv = spec.kvHeads * spec.headDim
  const shapes: Record<string, [number, number]> = {
    q_proj: [spec.hidden, q],
    k_proj: [spec.hidden, kv],
    v_proj: [spec.hidden, kv],
    o_proj: [q, spec.hidden],
    query: [spec.hidden, q],
    key: [spec.hidden, kv],
    value: [spec.hidden, kv],
    gate_proj: [spec.hidden, spec.ffn],
    up_proj: [spec.hidden, spec.ffn],
    down_proj: [spec.ffn, spec.hidden],
    w1: [spec.hidden, spec.ffn],
    w3: [spec.hidden, spec.ffn],
    w2: [spec.ffn, spec.hidden],
    fc1: [spec.hidden, spec.ffn],
    fc2: [spec.ffn, spec.hidden],
    c_fc: [spec.hidden, spec.ffn],
    dense_h_to_4h: [spec.hidden, spec.ffn],
    dense_4h_to_h: [spec.ffn, spec.hidden],
  }
  return shapes[leaf]
}

describe('--lora-targets: PEFT module names', () => {
  const catalogTypes = [...new Set(MODEL_CATALOG.map((m) => m.modelType))]

  it('knows the module names of every catalog architecture and of every model type the config reader supports', () => {
    for (const type of catalogTypes) expect(moduleLayout(type), type).toBeDefined()
    for (const type of SUPPORTED_MODEL_TYPES) expect(MODULE_LAYOUTS[type], type).toBeDefined()
  })

  for (const spec of MODEL_CATALOG) {
    const layout = moduleLayout(spec.modelType)
    if (!layout) continue
    it(`${spec.id}: every PEFT name adapts as many parameters as rigfit's names for the same layers`, () => {
      for (const layer of layout.linears) {
        const leaf = layer.path.split('.').at(-1) as string
        // The module's full name picks it alone; a shorter name every layer whose name ends the same way (PEFT).
        expect(resolveLoraTargets(`${layout.block}.${layer.path}`, spec), layer.path).toEqual([
          ...layer.targets,
        ])
        const endingIn = (name: string) =>
          layout.linears.filter((l) => l.path === name || l.path.endsWith(`.${name}`))
        for (const name of [leaf, layer.path]) {
          const expected = endingIn(name).flatMap((l) => l.targets)
          const via = resolveLoraTargets(name, spec)
          expect(new Set(via), name).toEqual(new Set(expected))
          expect(adapted(spec, via), name).toBe(adapted(spec, expected))
        }
        const sameLeaf = endingIn(leaf)
        const viaLeaf = resolveLoraTargets(leaf, spec)
        // Unfused layers against the modeling code's own shapes: rank x (in + out) per layer (and per expert).
        const shape = layer.targets.length === 1 ? hfShape(spec, leaf) : undefined
        if (shape && sameLeaf.length === 1) {
          const copies =
            spec.experts && /w[123]|gate_proj|up_proj|down_proj/.test(leaf) ? spec.experts.count : 1
          expect(adapted(spec, viaLeaf), leaf).toBe(spec.layers * RANK * (shape[0] + shape[1]) * copies)
        }
      }
      // all-linear is every block linear: the union of every layer's targets, and as many parameters.
      const every = [...new Set(layout.linears.flatMap((l) => l.targets))]
      expect(new Set(resolveLoraTargets(ALL_LINEAR, spec))).toEqual(new Set(every))
      expect(adapted(spec, resolveLoraTargets(ALL_LINEAR, spec))).toBe(adapted(spec, every))
      expect(adapted(spec, resolveLoraTargets(peftNames(layout).join(','), spec))).toBe(adapted(spec, every))
    })
  }

  it('reads q_proj,v_proj as q,v on Llama, c_attn as q,k,v and c_proj as both outputs on GPT-2, dense as o,up,down on BERT', () => {
    const model = (id: string) => MODEL_CATALOG.find((m) => m.id === id) as ModelSpec
    expect(resolveLoraTargets('q_proj,v_proj', model('llama-3.2-1b'))).toEqual(['q', 'v'])
    expect(resolveLoraTargets('c_attn', model('gpt2'))).toEqual(['q', 'k', 'v'])
    expect(resolveLoraTargets('c_proj', model('gpt2'))).toEqual(['o', 'down'])
    expect(resolveLoraTargets('mlp.c_proj', model('gpt2'))).toEqual(['down'])
    expect(resolveLoraTargets('dense', model('bert-base-uncased'))).toEqual(['o', 'up', 'down'])
    expect(resolveLoraTargets('query_key_value,dense', model('pythia-160m'))).toEqual(['q', 'k', 'v', 'o'])
    expect(resolveLoraTargets('gate_up_proj', model('phi-3-mini'))).toEqual(['gate', 'up'])
    // rigfit's own names mix with PEFT's; a layer named twice is adapted once.
    expect(resolveLoraTargets('q, q_proj ,k', model('mistral-7b'))).toEqual(['q', 'k'])
    expect(resolveLoraTargets(ALL_LINEAR, model('gpt2'))).toEqual(['q', 'k', 'v', 'o', 'up', 'down'])
  })

  it('refuses an unknown name as a usage error with the nearest name as suggestion', () => {
    const llama = MODEL_CATALOG.find((m) => m.id === 'llama-3.2-1b') as ModelSpec
    const gpt2 = MODEL_CATALOG.find((m) => m.id === 'gpt2') as ModelSpec
    for (const [text, model, near] of [
      ['q_prj', llama, 'q_proj'],
      ['c_atn', gpt2, 'c_attn'],
      ['q_proj,vproj', llama, 'v_proj'],
      ['allinear', llama, ALL_LINEAR],
      // A Llama name on GPT-2: GPT-2's layer for the same projection.
      ['q_proj', gpt2, 'c_attn'],
      ['dense_4h_to_h', llama, 'down_proj'],
    ] as const) {
      const error = (() => {
        try {
          resolveLoraTargets(text, model)
        } catch (e) {
          return e
        }
      })() as RigfitError
      expect(error, text).toBeInstanceOf(RigfitError)
      expect(error.kind).toBe('usage')
      expect(error.message).toContain('--lora-targets: unknown layer')
      expect(error.suggestion, text).toContain(`Did you mean "${near}"?`)
    }
    expect(() => resolveLoraTargets(' , ', llama)).toThrow(/no layer given/)
  })
})
