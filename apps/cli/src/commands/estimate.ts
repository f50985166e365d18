import { Flags, type Interfaces } from '@oclif/core'
import {
  assertSaneMemory,
  CLOUD_PRESETS,
  type EstimateInput,
  type EstimateResult,
  estimate,
  fitVerdict,
  formatStackRef,
  listModels,
  type ModelSpec,
  Precision,
  parseGiB,
  pinWarnings,
  RigfitError,
  resolveLoraTargets,
  resolveStack,
  runKind,
  type UserEstimateRequest,
  userEstimateInput,
} from '@rigfit/core'
import { osReserveBytes } from '@rigfit/profiler'
import { RigfitCommand } from '../lib/base-command.js'
import { calibrationFlags } from '../lib/calibration/calibration-flags.js'
import { calibrateEstimate } from '../lib/calibration/estimate-calibration.js'
import { type EstimateContext, resolveEstimateContext } from '../lib/estimate-context.js'
import { stackFlags, stackFromFlag, stackInput } from '../lib/estimate-stack-flags.js'
import { stackNotes } from '../lib/estimate-stack-notes.js'
import { resolveModelArg } from '../lib/hub/resolve-model-arg.js'
import { inputTimeoutFlags } from '../lib/input-timeout.js'
import { renderEstimate } from '../lib/render-estimate.js'
import { writeEstimateReport } from '../lib/report-estimate.js'
import { reportFlag } from '../lib/report-write.js'
import { hubOptions } from '../lib/workload-flags.js'

const GIB = 2 ** 30

export default class Estimate extends RigfitCommand {
  static override description =
    'Predict per-GPU training memory (weights, gradients, optimizer states, activations, logits, allocator and CUDA context) and, with --gpu, tokens/s for full, LoRA and QLoRA training. The model is validated against published measurements (see docs/estimate.md).'

  static override examples = [
    '<%= config.bin %> estimate --model Qwen/Qwen2.5-7B-Instruct --seq 2048 --micro-batch 1 --lora-rank 16 --gpu "RTX 4090"',
    '<%= config.bin %> estimate --model llama-3.1-8b --seq 2048 --micro-batch 1 --gpu "A100 80GB"',
    '<%= config.bin %> estimate --model mistral-7b --seq 1024 --micro-batch 4 --lora-rank 16 --lora-targets q,k,v,o --quant nf4 --precision bf16-true --gpu "RTX 4090"',
    '<%= config.bin %> estimate --model ./my-model/config.json --seq 4096 --micro-batch 2 --grad-ckpt --gpus 8 --sharding fsdp --vram 80 --json',
    '<%= config.bin %> estimate --model llama-3.1-8b --seq 1024 --micro-batch 1 --grad-accum 16 --attention flash --sharding fsdp --instance p4d.24xlarge',
    '<%= config.bin %> estimate --list-models',
  ]

  static override flags = {
    ...calibrationFlags,
    model: Flags.string({
      description:
        'A Hugging Face Hub id (Qwen/Qwen2.5-7B-Instruct, org/name@revision), a local model folder or config.json, or a catalog id (see --list-models).',
      helpValue: 'org/name[@rev]|folder|config.json|ID',
    }),
    ...inputTimeoutFlags,
    seq: Flags.integer({ description: 'Sequence length in tokens.', min: 1, max: 4_194_304 }),
    'micro-batch': Flags.integer({
      description: 'Sequences per GPU per forward pass.',
      min: 1,
      max: 1_000_000,
    }),
    'grad-accum': Flags.integer({
      description: 'Micro-batches accumulated per optimizer step.',
      default: 1,
      min: 1,
      max: 1_000_000,
    }),
    precision: Flags.option({
      options: Precision.options,
      default: 'bf16-mixed',
      description: 'Number format of training.',
    })(),
    optimizer: Flags.option({
      options: ['adamw', 'adamw-8bit', 'adafactor', 'sgd', 'sgd-momentum'] as const,
      default: 'adamw',
      description: 'Optimizer.',
    })(),
    'grad-ckpt': Flags.boolean({
      description: 'Gradient checkpointing (full recomputation of every layer).',
      default: false,
    }),
    attention: Flags.option({
      options: ['eager', 'sdpa', 'flash'] as const,
      description: "Attention implementation. Default: the stack's (sdpa for every current stack).",
    })(),
    gpus: Flags.integer({
      description:
        'GPUs training together per node (data parallel); default 1, or all the GPUs of --from / --instance.',
      min: 1,
      max: 100_000,
    }),
    nodes: Flags.integer({
      description: 'Machines training together, each with --gpus GPUs (their link is the network).',
      default: 1,
      min: 1,
      max: 100_000,
    }),
    sharding: Flags.option({
      options: ['none', 'zero1', 'zero2', 'zero3', 'fsdp'] as const,
      default: 'none',
      description: 'ZeRO stage or FSDP full-shard across --gpus.',
    })(),
    offload: Flags.option({
      options: ['none', 'optimizer', 'all'] as const,
      default: 'none',
      description: 'Move optimizer states (or also weights) to host RAM.',
    })(),
    'lora-rank': Flags.integer({
      description: 'Train LoRA adapters of this rank on a frozen base.',
      min: 1,
      max: 65_536,
    }),
    'lora-targets': Flags.string({
      description:
        "Comma-separated layers to adapt: q,k,v,o,gate,up,down, all-linear, or the model's module names as PEFT takes them (q_proj,v_proj; c_attn; query_key_value; ...). Default q,v.",
      helpValue: 'q,k,v,...',
    }),
    quant: Flags.option({
      options: ['none', 'int8', 'nf4'] as const,
      default: 'none',
      description: 'Quantise the frozen base (nf4 = QLoRA); needs --lora-rank.',
    })(),
    gpu: Flags.string({
      description:
        'GPU from the catalog, as nvidia-smi names it or short ("A100 80GB", "RTX 4090"); adds speed and the fit. Several of them are linked as the catalog says (SXM parts by NVLink, cards by PCIe).',
      helpValue: 'NAME',
    }),
    from: Flags.string({
      description:
        'Estimate on the devices of a saved profile (from `rigfit profile --out FILE`): its GPUs and their link, or its CPU when it has none.',
      helpValue: 'FILE',
    }),
    instance: Flags.string({
      description: `Estimate on a cloud instance (${CLOUD_PRESETS.map((preset) => preset.id).join(', ')}): its GPUs and their link.`,
      helpValue: 'NAME',
      exclusive: ['from', 'gpu'],
    }),
    'fused-optimizer': Flags.boolean({
      description:
        "Fused optimizer step (one kernel for all tensors), as optim adamw_torch_fused. Default: the stack's (fused for current Transformers, torchtune and torchtitan).",
      allowNo: true,
    }),
    'lora-dropout': Flags.string({
      description:
        "LoRA adapters' dropout (PEFT's lora_dropout; above 0 each adapted layer keeps a dropped copy of its input). Default 0.",
      helpValue: 'P',
    }),
    tf32: Flags.boolean({
      description:
        "TF32 matmuls for fp32 math. Default: the stack's (off for Transformers' Trainer, as PyTorch leaves it; on for LitGPT).",
      allowNo: true,
    }),
    rules: Flags.string({
      description: 'Also load the community rule packs at this path, as `rigfit plan --rules` does.',
      helpValue: 'PATH',
    }),
    vram: Flags.string({
      description: 'Memory per GPU in GiB (what-if, or overrides the --gpu size).',
      helpValue: 'GiB',
    }),
    ram: Flags.string({
      description:
        "RAM of the machine in GiB: a Mac's unified memory (an Apple --gpu gets its Metal working set, 2/3 of it up to 36 GiB), and what offloaded states must fit in.",
      helpValue: 'GiB',
    }),
    'list-models': Flags.boolean({ description: 'List the catalog models and exit.', default: false }),
    ...stackFlags,
    report: reportFlag,
    force: Flags.boolean({ description: 'Replace the --report file if it exists.', dependsOn: ['report'] }),
  }

  async run(): Promise<EstimateResult | { models: Pick<ModelSpec, 'id' | 'name' | 'modelType'>[] }> {
    const { flags } = await this.parse(Estimate)
    if (flags['list-models']) return this.listModels()

    const { spec: model } = await resolveModelArg(
      required(flags.model, '--model', 'llama-3.1-8b'),
      hubOptions(this.config.cacheDir, flags.timeout),
    )
    const seq = required(flags.seq, '--seq', '2048')
    const microBatch = required(flags['micro-batch'], '--micro-batch', '1')
    const warnings = positionWarnings(model, seq)
    const lora = parseLora(model, flags['lora-rank'], flags['lora-targets'], flags['lora-dropout'])
    if (flags.quant !== 'none' && !lora) {
      throw new RigfitError(
        'usage',
        'E_USAGE',
        `--quant ${flags.quant} quantises the frozen base model, which only LoRA training has.`,
        {
          suggestion: 'Add --lora-rank 16 (QLoRA), or drop --quant for full training.',
        },
      )
    }
    const vramBytes = flags.vram === undefined ? undefined : parseGiBBytes(flags.vram, '--vram')
    const ramBytes = flags.ram === undefined ? undefined : parseGiBBytes(flags.ram, '--ram')
    const context = await resolveEstimateContext(
      this,
      {
        gpu: flags.gpu,
        gpus: flags.gpus,
        from: flags.from,
        instance: flags.instance,
        vramBytes,
        ramBytes,
        rules: flags.rules,
      },
      { model, seq, nodes: flags.nodes, lora: lora !== null, quant: flags.quant },
    )
    const device = context?.device ?? null
    if (context) warnings.push(...contextNotes(context, ramBytes))
    if (device) {
      const pinned = { precision: flags.precision, attention: flags.attention }
      warnings.push(...pinWarnings(pinned, device).map((warning) => warning.message))
    }

    // The one path from what a user types to the estimate: validation rows go through it too.
    const stack = stackFromFlag(flags.stack)
    const request = estimateRequest(flags, { model, seq, microBatch, lora, context, stack })
    const input = userEstimateInput(request)
    const result = estimate(input)
    assertSaneMemory(result.perDevice.total, 'this configuration')
    assertSaneMemory(result.host.total, "this configuration's host memory")
    if (ramBytes !== undefined && result.host.total > ramBytes - osReserveBytes(ramBytes)) {
      warnings.push(
        `The offloaded states need ${(result.host.total / GIB).toFixed(1)} GiB of host RAM, more than the ${((ramBytes - osReserveBytes(ramBytes)) / GIB).toFixed(1)} GiB left of --ram ${flags.ram} after the OS.`,
      )
    }
    // --vram without --gpu still answers "does it fit", with no speed.
    const judged: EstimateResult =
      !device && vramBytes !== undefined
        ? withCapacity(result, input, vramBytes)
        : await calibrateEstimate(this, flags.calibration, context, input, result)
    const final: EstimateResult = { ...judged, stack: formatStackRef(stack.ref) }
    warnings.push(...stackNotes(stack, request, judged, input, vramBytes))

    if (!this.jsonEnabled()) this.printEstimate(input, final, warnings)
    if (flags.report) await writeEstimateReport(flags.report, flags.force, input, final, this.config.version)
    return final
  }

  private printEstimate(input: EstimateInput, final: EstimateResult, warnings: string[]): void {
    const color = this.colorEnabled
    const paint = (code: string) => (text: string) => (color ? `\u001b[${code}m${text}\u001b[0m` : text)
    const style = { bold: paint('1'), dim: paint('2'), good: paint('32'), bad: paint('31') }
    this.writeOut(renderEstimate(input, final, style, warnings))
  }

  private listModels(): { models: Pick<ModelSpec, 'id' | 'name' | 'modelType'>[] } {
    const models = listModels().map(({ id, name, modelType }) => ({ id, name, modelType }))
    if (!this.jsonEnabled()) {
      for (const m of models) this.log(`${m.id.padEnd(20)} ${m.name.padEnd(54)} ${m.modelType}`)
    }
    return { models }
  }
}

/** What the reader must know about the machine the estimate assumed. */
function contextNotes(context: EstimateContext, ramBytes: number | undefined): string[] {
  const { device } = context
  const notes = context.profile.notes.filter((note) => note.startsWith('What-if Mac'))
  if (device.kind === 'mps' && notes.length === 0) {
    notes.push(
      `${device.name} plans on its Metal working set, ${(device.vramBytes / GIB).toFixed(1)} GiB of the Mac's unified memory${ramBytes === undefined ? " (--ram says the Mac's RAM)" : ''}.`,
    )
  }
  if (device.kind === 'cpu') {
    notes.push(`No training GPU in the profile: the estimate is for its CPU, ${device.name}.`)
    if (context.assumedFigures.length > 0) {
      notes.push(
        `The profile has no measured ${context.assumedFigures.join(', ')}, so a default was assumed (\`rigfit profile --benchmark\` measures it).`,
      )
    }
  } else if (context.assumedFigures.length > 0) {
    notes.push(`${device.name}: ${context.assumedFigures.join(', ')} assumed; the catalog has no figure.`)
  }
  return notes
}

/** A sequence past the model's positions: refused for a learned position table, a warning for RoPE. */
function positionWarnings(model: ModelSpec, seq: number): string[] {
  if (seq <= model.maxPositions) return []
  const message = `--seq ${seq} is longer than the ${model.maxPositions} positions ${model.id} was built for`
  if (model.positions === 'learned') {
    throw new RigfitError('usage', 'E_USAGE', `${message}; its position table has no rows beyond that.`, {
      suggestion: `Use --seq ${model.maxPositions} or less.`,
    })
  }
  return [`${message}; RoPE models need position scaling to train well beyond it.`]
}

/** The estimate as the user typed it: the flags' settings on the device and link the context resolved. */
function estimateRequest(
  flags: Interfaces.InferredFlags<typeof Estimate.flags>,
  typed: {
    model: ModelSpec
    seq: number
    microBatch: number
    lora: UserEstimateRequest['settings']['lora']
    context: EstimateContext | null
    stack: ReturnType<typeof stackFromFlag>
  },
): UserEstimateRequest {
  const { model, seq, microBatch, lora, context } = typed
  const gpus = context?.gpus ?? flags.gpus ?? 1
  return {
    model,
    device: context?.device ?? null,
    settings: {
      seq,
      microBatch,
      gradAccum: flags['grad-accum'],
      precision: flags.precision,
      optimizer: flags.optimizer,
      gradCheckpointing: flags['grad-ckpt'],
      ...(flags.attention === undefined ? {} : { attention: flags.attention }),
      gpus,
      nodes: flags.nodes,
      interconnect: context?.interconnect ?? (gpus * flags.nodes > 1 ? 'unknown' : 'none'),
      sharding: flags.sharding,
      offload: flags.offload,
      lora,
      quant: flags.quant,
      ...(flags['fused-optimizer'] === undefined ? {} : { fusedOptimizer: flags['fused-optimizer'] }),
      ...(flags.tf32 === undefined ? {} : { tf32: flags.tf32 }),
      ...(flags.compile === undefined ? {} : { compile: flags.compile }),
    },
    stack: resolveStack(typed.stack.ref).mechanisms,
    overrides: stackInput(flags),
  }
}

function required<T>(value: T | undefined, flag: string, example: string): T {
  if (value === undefined) {
    throw new RigfitError('usage', 'E_USAGE', `${flag} is required`, {
      suggestion: `Add ${flag} ${example}.`,
    })
  }
  return value
}

function parseGiBBytes(text: string, flag: '--vram' | '--ram'): number {
  return Math.round(parseGiB(text, flag) * GIB)
}

function parseLora(
  model: ModelSpec,
  rank: number | undefined,
  targetsText: string | undefined,
  dropoutText: string | undefined,
): EstimateInput['lora'] {
  if (rank === undefined) {
    const orphan =
      targetsText !== undefined ? '--lora-targets' : dropoutText !== undefined ? '--lora-dropout' : null
    if (orphan) {
      throw new RigfitError('usage', 'E_USAGE', `${orphan} needs --lora-rank`, {
        suggestion: `Add --lora-rank 16, or drop ${orphan}.`,
      })
    }
    return null
  }
  const dropout = dropoutText === undefined ? 0 : Number(dropoutText)
  if (dropoutText?.trim() === '' || !Number.isFinite(dropout) || dropout < 0 || dropout >= 1) {
    throw new RigfitError(
      'usage',
      'E_USAGE',
      `--lora-dropout "${dropoutText}" is not a probability below 1`,
      {
        suggestion: 'Write it as a number such as --lora-dropout 0.05.',
      },
    )
  }
  return { rank, targets: resolveLoraTargets(targetsText ?? 'q,v', model), dropout }
}

/** The estimate judged against a what-if memory size: the same verdict and band as with a GPU. */
function withCapacity(result: EstimateResult, input: EstimateInput, capacity: number): EstimateResult {
  const fit = fitVerdict(result.perDevice.total, capacity, runKind(input))
  return {
    ...result,
    capacity,
    fits: fit.verdict === 'fits',
    verdict: fit.verdict,
    headroom: capacity - result.perDevice.total,
    confidence: fit.confidence,
  }
}
