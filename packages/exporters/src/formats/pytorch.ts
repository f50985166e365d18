import { processesPerNode, type TrainingPlan, worldSize } from '@rigfit/core'
import { engineOf, torchBackendName } from '../engine.js'
import { baseModelId, bnbQuantizationConfig, loadDtypeName, peftAdapterConfig } from '../method.js'
import { optimizationOf } from '../plan-facts.js'
import { provenance, textFile } from '../render.js'
import type { Exporter } from '../types.js'

export const PYTORCH_FILE = 'rigfit_settings.py'

/** torch.utils.data.DataLoader keyword arguments this module may return. */
const DATALOADER_KEYS = ['num_workers', 'pin_memory', 'prefetch_factor', 'persistent_workers'] as const

type PyValue = string | number | boolean | null | string[] | number[]

/** A Python literal for a JSON-like value (strings and lists of strings are JSON, which Python reads the same). */
function py(value: PyValue): string {
  if (value === null) return 'None'
  if (typeof value === 'boolean') return value ? 'True' : 'False'
  return JSON.stringify(value)
}

function pyDict(name: string, entries: Record<string, PyValue> | null): string {
  if (entries === null) return `${name} = None`
  const body = Object.entries(entries)
    .map(([k, v]) => `    ${JSON.stringify(k)}: ${py(v)},`)
    .join('\n')
  return `${name} = {\n${body}\n}`
}

/** Reads back a dict literal this module wrote (flat, JSON-quoted keys, Python constants). */
export function readPyDict(source: string, name: string): Record<string, PyValue> | null {
  const match = new RegExp(`^${name} = \\{\\n([\\s\\S]*?)\\n\\}`, 'm').exec(source)
  if (!match?.[1]) return null
  const json = `{${match[1].replace(/,\s*$/, '')}}`
    .replace(/\bTrue\b/g, 'true')
    .replace(/\bFalse\b/g, 'false')
    .replace(/\bNone\b/g, 'null')
  try {
    return JSON.parse(json) as Record<string, PyValue>
  } catch {
    return null
  }
}

function dataloaderKwargs(plan: TrainingPlan): Record<string, PyValue> {
  const d = plan.settings.dataloader
  const kwargs: Record<string, PyValue> = { num_workers: d.workers, pin_memory: d.pinMemory }
  // DataLoader rejects prefetch_factor and persistent_workers without worker processes.
  if (d.workers > 0)
    Object.assign(kwargs, { prefetch_factor: d.prefetchFactor ?? 2, persistent_workers: d.persistentWorkers })
  return kwargs
}

/** Keyword arguments of peft.LoraConfig for the plan's adapter (adapter_config.json without its bookkeeping). */
function loraKwargs(plan: TrainingPlan, warn: (id: string, message: string) => void) {
  const adapter = peftAdapterConfig(plan, warn)
  if (adapter === null) return null
  const { r, lora_alpha, lora_dropout, target_modules, fan_in_fan_out, bias, task_type } = adapter
  return { r, lora_alpha, lora_dropout, target_modules, fan_in_fan_out, bias, task_type } as Record<
    string,
    PyValue
  >
}

/** Keyword arguments of transformers.BitsAndBytesConfig for the plan's quantized base model. */
function quantizationKwargs(plan: TrainingPlan) {
  const config = bnbQuantizationConfig(plan, engineOf(plan))
  if (config === null) return null
  const { quant_method: _method, ...kwargs } = config
  return kwargs as Record<string, PyValue>
}

function moduleSource(plan: TrainingPlan, warn: (id: string, message: string) => void): string {
  return `"""Framework-level settings from a rigfit plan.

${provenance(plan)}

    import rigfit_settings
    loader_kwargs = rigfit_settings.apply()
    loader = DataLoader(dataset, batch_size=rigfit_settings.SETTINGS["micro_batch"], **loader_kwargs)
"""

${pyDict('SETTINGS', settingsOf(plan))}

${pyDict('DATALOADER_KWARGS', dataloaderKwargs(plan))}

# peft.LoraConfig keyword arguments for the plan's adapter; None when the plan trains every weight.
${pyDict('LORA_CONFIG', loraKwargs(plan, warn))}

# transformers.BitsAndBytesConfig keyword arguments for the quantized base model; None without quantization.
${pyDict('QUANTIZATION_CONFIG', quantizationKwargs(plan))}

${APPLY_FUNCTIONS}`
}

/** The plan's settings under the names the module's SETTINGS dict gives them. */
function settingsOf(plan: TrainingPlan): Record<string, PyValue> {
  const s = plan.settings
  const opt = optimizationOf(plan)
  return {
    device: s.device,
    method: s.method,
    model_name_or_path: baseModelId(plan),
    model_dtype: loadDtypeName(plan),
    micro_batch: s.microBatch,
    grad_accum: s.gradAccum,
    world_size: worldSize(s),
    processes_per_node: processesPerNode(s),
    nodes: s.nodes,
    effective_batch: s.effectiveBatch,
    seq: s.seq,
    precision: s.precision,
    gradient_checkpointing: s.gradCheckpointing,
    compile: s.compile.enabled,
    compile_mode: s.compile.mode,
    attention: s.attention,
    tf32: s.tf32,
    cudnn_benchmark: s.cudnnBenchmark,
    threads: s.threads,
    // torch.distributed.init_process_group's name: ROCm builds register RCCL as `nccl`.
    backend: torchBackendName(plan),
    strategy: s.strategy,
    sharding: s.sharding,
    offload: s.offload,
    quantization: s.quant,
    learning_rate: s.learningRate,
    adam_betas: [opt.beta1, opt.beta2],
    adam_epsilon: opt.epsilon,
    weight_decay: opt.weightDecay,
    warmup_steps: opt.warmupSteps,
    max_grad_norm: opt.gradClip,
  }
}

/** The module's functions that apply the settings: threads, cuDNN, TF32, and the adapter and quantization configs. */
const APPLY_FUNCTIONS = `
def apply():
    """Sets threads, cuDNN autotuning and TF32 as the plan decided; returns DataLoader keyword arguments."""
    import torch

    torch.set_num_threads(SETTINGS["threads"])
    # cudnn.benchmark autotunes convolution kernels for fixed input shapes.
    torch.backends.cudnn.benchmark = SETTINGS["cudnn_benchmark"]
    # TF32 matmuls and convolutions (Ampere and newer); "highest" keeps float32 matmuls exact elsewhere.
    torch.backends.cuda.matmul.allow_tf32 = SETTINGS["tf32"]
    torch.backends.cudnn.allow_tf32 = SETTINGS["tf32"]
    torch.set_float32_matmul_precision("high" if SETTINGS["tf32"] else "highest")
    return dict(DATALOADER_KWARGS)


def lora_config():
    """The plan's adapter as a peft.LoraConfig (wrap the model with peft.get_peft_model), or None."""
    if LORA_CONFIG is None:
        return None
    from peft import LoraConfig

    return LoraConfig(**LORA_CONFIG)


def quantization_config():
    """The plan's base-model quantization as a transformers.BitsAndBytesConfig (from_pretrained's
    quantization_config), or None."""
    if QUANTIZATION_CONFIG is None:
        return None
    from transformers import BitsAndBytesConfig

    return BitsAndBytesConfig(**QUANTIZATION_CONFIG)
`

export const pytorchFormat: Exporter = {
  name: 'pytorch',
  description:
    'Python module whose apply() sets cuDNN benchmark, TF32, matmul precision and threads and returns DataLoader kwargs; lora_config() and quantization_config() build the PEFT and bitsandbytes configs',
  unsupportedReason: () => null,
  render: (plan, ctx) => [textFile(PYTORCH_FILE, moduleSource(plan, ctx.warn))],
  validate(files, plan) {
    const file = files.find((f) => f.path === PYTORCH_FILE)
    if (!file) return [`${PYTORCH_FILE}: missing from the export`]
    const problems: string[] = []
    const kwargs = readPyDict(file.content, 'DATALOADER_KWARGS')
    const settings = readPyDict(file.content, 'SETTINGS')
    if (!kwargs || !settings) return [`${PYTORCH_FILE}: SETTINGS or DATALOADER_KWARGS cannot be read back`]
    for (const key of Object.keys(kwargs)) {
      if (!(DATALOADER_KEYS as readonly string[]).includes(key))
        problems.push(`${PYTORCH_FILE}: ${key} is not a DataLoader argument`)
    }
    if (kwargs.num_workers === 0 && ('prefetch_factor' in kwargs || 'persistent_workers' in kwargs)) {
      problems.push(`${PYTORCH_FILE}: prefetch_factor / persistent_workers without workers`)
    }
    const n = (key: string) => Number(settings[key])
    if (
      n('micro_batch') * n('grad_accum') * n('world_size') !== n('effective_batch') ||
      n('effective_batch') !== plan.settings.effectiveBatch
    ) {
      problems.push(`${PYTORCH_FILE}: micro_batch x grad_accum x world_size != effective_batch`)
    }
    return problems
  },
}
