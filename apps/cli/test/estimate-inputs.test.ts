import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EstimateResult } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { rigfit } from './helpers/run-cli.js'

const estimate = (...args: string[]) => rigfit(['estimate', '--seq', '512', '--micro-batch', '1', ...args])
const json = (...args: string[]) => {
  const r = estimate(...args, '--json')
  expect(r.status, r.stderr).toBe(0)
  return EstimateResult.parse(JSON.parse(r.stdout))
}

describe('rigfit estimate --lora-targets with PEFT module names', () => {
  it('reads q_proj,v_proj, c_attn and all-linear as the layers rigfit names q,v / q,k,v / all', () => {
    const lora = (model: string, targets: string) =>
      json('--model', model, '--lora-rank', '16', '--lora-targets', targets)
    for (const [model, peft, own] of [
      ['llama-3.2-1b', 'q_proj,v_proj', 'q,v'],
      ['llama-3.2-1b', 'all-linear', 'q,k,v,o,gate,up,down'],
      ['gpt2', 'c_attn,mlp.c_proj', 'q,k,v,down'],
      ['gpt2', 'all-linear', 'q,k,v,o,up,down'],
      ['pythia-160m', 'query_key_value,dense', 'q,k,v,o'],
      ['bert-base-uncased', 'query,value', 'q,v'],
    ] as const) {
      const viaPeft = lora(model, peft)
      expect(viaPeft.params.trainable, `${model} ${peft}`).toBe(lora(model, own).params.trainable)
      expect(viaPeft.perDevice).toEqual(lora(model, own).perDevice)
    }
    // The text output says which layers were adapted, in rigfit's names.
    const text = estimate('--model', 'llama-3.2-1b', '--lora-rank', '16', '--lora-targets', 'q_proj,v_proj')
    expect(text.status, text.stderr).toBe(0)
    expect(text.stdout).toContain('LoRA r=16 on q,v')
  })

  it('refuses an unknown name with exit code 2, naming it and the nearest name', () => {
    const r = estimate('--model', 'llama-3.2-1b', '--lora-rank', '16', '--lora-targets', 'q_proj,v_prj')
    expect(r.status).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('--lora-targets: unknown layer "v_prj" of llama-3.2-1b (model_type llama)')
    expect(r.stderr).toContain('Did you mean "v_proj"?')
    const gpt2 = estimate('--model', 'gpt2', '--lora-rank', '16', '--lora-targets', 'q_proj', '--json')
    expect(gpt2.status).toBe(2)
    const error = JSON.parse(gpt2.stdout).error
    expect(error.message).toContain('unknown layer "q_proj"')
    expect(error.suggestion).toContain('Did you mean "c_attn"?')
  })
})

describe('rigfit estimate --model config.json: omitted keys take Transformers defaults', () => {
  it("prices a GPT-2 config without dropout keys with GPT-2's 0.1 dropout, as from_pretrained loads it", () => {
    const dir = mkdtempSync(join(tmpdir(), 'rigfit-defaults-'))
    const write = (name: string, config: object) => {
      const file = join(dir, name)
      writeFileSync(file, JSON.stringify({ model_type: 'gpt2', n_layer: 6, ...config }))
      return file
    }
    const omitted = json('--model', write('omitted.json', {}))
    const documented = json('--model', write('documented.json', { attn_pdrop: 0.1, resid_pdrop: 0.1 }))
    const none = json('--model', write('none.json', { attn_pdrop: 0, resid_pdrop: 0 }))
    expect(omitted.perDevice).toEqual(documented.perDevice)
    // Dropout keeps its masks for backward: the 0.1 default costs activation memory a 0 would not.
    expect(omitted.perDevice.activations).toBeGreaterThan(none.perDevice.activations)
    expect(omitted.params.total).toBe(none.params.total)
  })
})
