import type { ModelSpec, TrainingPlan } from '@rigfit/core'
import { findCatalogModel } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { exportPlan } from '../src/export-plan.js'
import { readPyDict } from '../src/formats/pytorch.js'
import { loraTargetModules } from '../src/lora-modules.js'
import { ATTN_IMPLEMENTATION } from '../src/model-classes.js'
import type { ExportFile } from '../src/types.js'
import { loadFixturePlan } from './helpers/fixture-plans.js'
import { yaml11 } from './helpers/read-back.js'

const qlora = loadFixturePlan('rtx4090-qlora-zero-offload')
const lora = loadFixturePlan('rtx3090x2-lora-fsdp')
const json = (files: ExportFile[], path: string) =>
  JSON.parse(files.find((f) => f.path === path)?.content ?? 'null') as Record<string, unknown> | null

describe('LoRA and QLoRA are carried by every format', () => {
  it('hf: PEFT adapter_config.json, BitsAndBytesConfig quantization_config.json, base model and sequence', () => {
    expect(qlora.model.modelType).toBe('mixtral')
    const result = exportPlan(qlora, { format: 'hf' })
    const rank = qlora.settings.lora?.rank as number
    expect(json(result.files, 'adapter_config.json')).toMatchObject({
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      base_model_name_or_path: qlora.model.name,
      r: rank,
      lora_alpha: 2 * rank,
      lora_dropout: 0,
      // Mixtral: Llama attention projections; the experts' gate, up and down are w1, w3 and w2.
      target_modules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'w1', 'w3', 'w2'].filter((_, i) =>
        (qlora.settings.lora?.targets ?? []).includes(
          ['q', 'k', 'v', 'o', 'gate', 'up', 'down'][i] as string,
        ),
      ),
    })
    expect(json(result.files, 'quantization_config.json')).toEqual({
      quant_method: 'bitsandbytes',
      load_in_4bit: true,
      load_in_8bit: false,
      bnb_4bit_quant_type: 'nf4',
      bnb_4bit_compute_dtype: 'bfloat16',
      bnb_4bit_use_double_quant: true,
      // ZeRO-3 flattens the 4-bit weights with the rest, so they are stored in the compute dtype.
      bnb_4bit_quant_storage: 'bfloat16',
    })
    expect(json(result.files, 'model_args.json')).toEqual({
      model_name_or_path: qlora.model.name,
      block_size: qlora.settings.seq,
      dtype: 'bfloat16',
      attn_implementation: ATTN_IMPLEMENTATION[qlora.settings.attention],
    })
  })

  it('lightning, pytorch and hydra apply the same adapter and quantization', () => {
    const lightning = exportPlan(qlora, { format: 'lightning' }).files
    const config = yaml11(lightning.find((f) => f.path === 'lightning_config.yaml')?.content ?? '')
    expect(config.model).toEqual({
      model_name_or_path: qlora.model.name,
      dtype: 'bfloat16',
      attn_implementation: ATTN_IMPLEMENTATION[qlora.settings.attention],
      adapter_config: 'adapter_config.json',
      quantization_config: 'quantization_config.json',
      // The module's warm-up: the plan's, for the optimizer LightningCLI builds beside it.
      warmup_steps: qlora.settings.optimization?.warmupSteps,
    })
    expect((config.data as { block_size: number }).block_size).toBe(qlora.settings.seq)
    expect(json(lightning, 'adapter_config.json')?.r).toBe(qlora.settings.lora?.rank)

    const source = exportPlan(qlora, { format: 'pytorch' }).files[0]?.content ?? ''
    expect(readPyDict(source, 'LORA_CONFIG')).toMatchObject({ r: qlora.settings.lora?.rank, lora_dropout: 0 })
    expect(readPyDict(source, 'QUANTIZATION_CONFIG')).toMatchObject({
      load_in_4bit: true,
      bnb_4bit_quant_type: 'nf4',
    })
    expect(source).toMatch(/def lora_config\(\):[\s\S]*LoraConfig\(\*\*LORA_CONFIG\)/)
    expect(source).toMatch(/BitsAndBytesConfig\(\*\*QUANTIZATION_CONFIG\)/)

    const group = yaml11(exportPlan(qlora, { format: 'hydra' }).files[0]?.content ?? '') as {
      model: { lora: { r: number }; quantization: { bnb_4bit_quant_type: string }; name_or_path: string }
    }
    expect(group.model.lora.r).toBe(qlora.settings.lora?.rank)
    expect(group.model.quantization.bnb_4bit_quant_type).toBe('nf4')
    expect(group.model.name_or_path).toBe(qlora.model.name)
  })

  it('launchers bundle the PEFT and bitsandbytes configs beside the plan', () => {
    for (const format of ['accelerate', 'deepspeed', 'torchrun', 'slurm']) {
      const files = exportPlan(qlora, { format }).files
      expect(json(files, 'adapter_config.json')?.r, format).toBe(qlora.settings.lora?.rank)
      expect(json(files, 'quantization_config.json')?.bnb_4bit_quant_type, format).toBe('nf4')
    }
    // A LoRA plan without quantization has no quantization file, and FSDP keeps no 4-bit storage rule.
    const files = exportPlan(lora, { format: 'accelerate' }).files
    expect(json(files, 'adapter_config.json')?.r).toBe(lora.settings.lora?.rank)
    expect(json(files, 'quantization_config.json')).toBeNull()
  })

  it('kconfig states the method and warns loudly that its symbols cannot carry it', () => {
    const result = exportPlan(qlora, { format: 'kconfig' })
    expect(result.files[0]?.content).toMatch(
      new RegExp(
        `^# Method: QLoRA r=${qlora.settings.lora?.rank} alpha=${2 * (qlora.settings.lora?.rank ?? 0)} dropout=0 on`,
        'm',
      ),
    )
    expect(result.warnings.map((w) => w.id)).toContain('kconfig-method')
  })

  it('full training writes no adapter anywhere', () => {
    const full = loadFixturePlan('a100x4-zero3-optimizer-offload')
    for (const format of ['hf', 'accelerate', 'deepspeed', 'torchrun', 'slurm', 'lightning']) {
      expect(json(exportPlan(full, { format }).files, 'adapter_config.json'), format).toBeNull()
    }
  })
})

describe('LoRA target modules use the names PEFT matches in each model family', () => {
  const model = (id: string) => findCatalogModel(id) as ModelSpec
  const names = (id: string, targets: string[]) => {
    const warnings: string[] = []
    return { modules: loraTargetModules(model(id), targets, (w) => warnings.push(w)), warnings }
  }

  it('tells GPT-2 attention output from MLP output by the module path', () => {
    expect(names('gpt2', ['o', 'down'])).toEqual({ modules: ['attn.c_proj', 'mlp.c_proj'], warnings: [] })
  })

  it('warns when a fused projection adapts more than the plan names', () => {
    expect(names('gpt2', ['q', 'v'])).toEqual({ modules: ['c_attn'], warnings: ['lora-fused-targets'] })
    expect(names('phi-3-mini', ['q', 'k', 'v', 'gate', 'up'])).toEqual({
      modules: ['qkv_proj', 'gate_up_proj'],
      warnings: [],
    })
  })

  it("names Mixtral's experts and picks BERT's MLP output with a pattern", () => {
    expect(names('mixtral-8x7b', ['gate', 'up', 'down']).modules).toEqual(['w1', 'w3', 'w2'])
    const bert = loraTargetModules({ ...model('gpt2'), modelType: 'bert' }, ['q', 'v', 'down'], () => {})
    expect(bert).toBe('.*\\.(?:query|value|layer\\.\\d+\\.output\\.dense)')
    const re = new RegExp(`^${bert as string}$`)
    expect(re.test('bert.encoder.layer.3.output.dense')).toBe(true)
    expect(re.test('bert.encoder.layer.3.attention.output.dense')).toBe(false)
  })

  it('falls back on the Llama names for an unknown model type, loudly', () => {
    const warnings: string[] = []
    const modules = loraTargetModules({ ...model('gpt2'), modelType: 'my_llama' }, ['q', 'v'], (w) =>
      warnings.push(w),
    )
    expect(modules).toEqual(['q_proj', 'v_proj'])
    expect(warnings).toEqual(['lora-module-names'])
  })
})

describe('the base model a fine-tune starts from', () => {
  it('is the repository for catalog models and none for pretraining', () => {
    const pretrain = loadFixturePlan('rtx4090-bf16')
    const args = json(exportPlan(pretrain, { format: 'hf' }).files, 'model_args.json')
    // Trained under autocast, the weights load in fp32 whatever the loader's default.
    expect(args).toEqual({
      config_name: 'config.json',
      dtype: 'float32',
      attn_implementation: ATTN_IMPLEMENTATION[pretrain.settings.attention],
      block_size: pretrain.settings.seq,
    })
    const withConfig: TrainingPlan = {
      ...lora,
      model: {
        ...lora.model,
        source: 'config',
        id: 'models/mine/config.json',
        name: 'models/mine/config.json',
      },
    }
    expect(json(exportPlan(withConfig, { format: 'hf' }).files, 'model_args.json')?.model_name_or_path).toBe(
      'models/mine',
    )
  })
})
