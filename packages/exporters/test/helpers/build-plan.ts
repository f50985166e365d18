import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import {
  type Mode,
  type Precision,
  type TrainingPlan,
  TrainingPlan as TrainingPlanSchema,
} from '@rigfit/core'

/** A hand-built plan's inputs; every other figure is derived so the fixture stays self-consistent. */
export interface PlanRecipe {
  mode: Mode
  summary: string
  gpuName: string | null
  gpus: number
  nodes: number
  computeCapability: string | null
  deviceMemoryGiB: number
  hostMemoryGiB: number
  device: TrainingPlan['settings']['device']
  backend: TrainingPlan['settings']['backend']
  precision: Precision
  strategy: TrainingPlan['settings']['strategy']
  sharding: TrainingPlan['settings']['sharding']
  offload: TrainingPlan['settings']['offload']
  microBatch: number
  gradAccum: number
  seq: number
  model: {
    name: string
    layers: number
    hidden: number
    heads: number
    kvHeads: number
    ffn: number
    vocab: number
    layout: 'gpt2' | 'llama'
  }
  gradCheckpointing: boolean
  compile: boolean
  tf32: boolean
  threads: number
  workers: number
  pinMemory: boolean
  tokensPerSecondPerDevice: number
  tokensPerParam: number
  watts: number
  tdpWatts: number
}

const GiB = 2 ** 30
const BUDGET: Record<Mode, number> = { conservative: 0.5, balanced: 0.75, extreme: 0.95 }

function paramCount(r: PlanRecipe): number {
  const m = r.model
  const headDim = m.hidden / m.heads
  const attention = 2 * m.hidden * m.heads * headDim + 2 * m.hidden * m.kvHeads * headDim
  const mlp = (m.layout === 'llama' ? 3 : 2) * m.hidden * m.ffn
  const embeddings = m.vocab * m.hidden + (m.layout === 'gpt2' ? r.seq * m.hidden : 0)
  return embeddings + m.layers * (attention + mlp + 2 * m.hidden) + m.hidden
}

export function buildPlan(r: PlanRecipe): TrainingPlan {
  const params = paramCount(r)
  const world = Math.max(r.gpus, 1) * r.nodes
  const effectiveBatch = r.microBatch * r.gradAccum * world
  const pure = r.precision.endsWith('-true')
  const shard = (kind: 'opt' | 'grad' | 'weights') => {
    const n = world
    if (r.sharding === 'zero3' || r.sharding === 'fsdp') return n
    if (r.sharding === 'zero2') return kind === 'weights' ? 1 : n
    if (r.sharding === 'zero1') return kind === 'opt' ? n : 1
    return 1
  }
  const weights = Math.round((params * (pure ? 2 : 4)) / shard('weights'))
  const gradients = Math.round((params * (pure ? 2 : 4)) / shard('grad'))
  const optimizer = r.offload === 'none' ? Math.round((params * 8) / shard('opt')) : 0
  const activations =
    r.microBatch * r.seq * r.model.hidden * r.model.layers * (r.gradCheckpointing ? 2 : 16) * 2
  const logits = r.microBatch * r.seq * r.model.vocab * 4
  const other = Math.round(0.05 * (weights + gradients + optimizer + activations + logits))
  const peakAllocated = weights + gradients + optimizer + activations + logits + other
  const reserved = Math.round(peakAllocated * 1.1)
  const cudaContext = r.device === 'cuda' || r.device === 'rocm' ? 500 * 2 ** 20 : 0
  const total = reserved + cudaContext
  const capacityBytes = r.deviceMemoryGiB * GiB
  const tokensPerSecond = r.tokensPerSecondPerDevice * world * (r.nodes > 1 ? 0.9 : 1)
  const budget = Math.round(params * r.tokensPerParam)
  const totalHours = budget / tokensPerSecond / 3600
  const checkpointBytes = params * 16
  const headDim = r.model.hidden / r.model.heads
  const layout =
    r.model.layout === 'gpt2'
      ? {
          modelType: 'gpt2',
          mlp: 'gelu',
          norm: 'layernorm',
          positions: 'learned',
          tiedEmbeddings: true,
          bias: 'all',
        }
      : {
          modelType: 'llama',
          mlp: 'swiglu',
          norm: 'rmsnorm',
          positions: 'rope',
          tiedEmbeddings: false,
          bias: 'none',
        }
  const plan = {
    schemaVersion: 1,
    rigfitVersion: '0.1.0',
    createdAt: '2025-01-15T12:00:00.000Z',
    mode: r.mode,
    hardware: {
      summary: r.summary,
      gpuName: r.gpuName,
      gpus: r.gpus,
      nodes: r.nodes,
      computeCapability: r.computeCapability,
      deviceMemoryBytes: capacityBytes,
      hostMemoryBytes: r.hostMemoryGiB * GiB,
      profileSource: 'fixture',
    },
    workload: { kind: 'pretrain', description: `pretrain ${r.model.name} from scratch` },
    model: {
      schemaVersion: 1,
      id: r.model.name,
      name: r.model.name,
      source: 'generated',
      kind: 'decoder',
      layers: r.model.layers,
      hidden: r.model.hidden,
      heads: r.model.heads,
      kvHeads: r.model.kvHeads,
      headDim,
      ffn: r.model.ffn,
      vocab: r.model.vocab,
      maxPositions: r.seq,
      experts: null,
      typeVocab: 0,
      ...layout,
    },
    params: { total: params, trainable: params },
    settings: {
      device: r.device,
      gpus: r.gpus,
      nodes: r.nodes,
      microBatch: r.microBatch,
      gradAccum: r.gradAccum,
      effectiveBatch,
      seq: r.seq,
      precision: r.precision,
      optimizer: 'adamw',
      fusedOptimizer: r.device === 'cuda',
      gradCheckpointing: r.gradCheckpointing,
      attention: r.device === 'cuda' ? 'flash' : 'sdpa',
      sharding: r.sharding,
      offload: r.offload,
      method: 'full',
      lora: null,
      quant: 'none',
      compile: { enabled: r.compile, mode: 'default' },
      tf32: r.tf32,
      cudnnBenchmark: r.device === 'cuda' || r.device === 'rocm',
      backend: r.backend,
      strategy: r.strategy,
      threads: r.threads,
      dataloader: {
        workers: r.workers,
        pinMemory: r.pinMemory,
        prefetchFactor: r.workers > 0 ? 2 : null,
        persistentWorkers: r.workers > 0,
      },
      learningRate: 6e-4,
    },
    memory: {
      perDevice: {
        weights,
        gradients,
        optimizer,
        activations,
        logits,
        other,
        peakAllocated,
        reserved,
        cudaContext,
        total,
      },
      hostBytes: 4 * GiB + (r.offload === 'none' ? 0 : Math.round((params * 12) / Math.max(r.gpus, 1))),
      capacityBytes,
      budgetFraction: BUDGET[r.mode],
      usedFraction: total / capacityBytes,
    },
    throughput: {
      tokensPerSecond,
      tokensPerSecondPerDevice: tokensPerSecond / world,
      stepSeconds: (effectiveBatch * r.seq) / tokensPerSecond,
      mfu: 0.4,
    },
    tokens: {
      budget,
      tokensPerParam: r.tokensPerParam,
      chinchillaTokens: budget,
      timeBudgetTokens: null,
      binding: 'chinchilla',
    },
    time: { totalHours, steps: Math.ceil(budget / (effectiveBatch * r.seq)) },
    power: {
      watts: r.watts,
      tdpFraction: r.watts / r.tdpWatts,
      energyKWh: (r.watts * totalHours) / 1000,
      psuHeadroomWatts: null,
    },
    checkpoints: {
      intervalMinutes: 30,
      sizeBytes: checkpointBytes,
      kept: 3,
      diskNeededBytes: checkpointBytes * 3,
      diskFreeBytes: null,
      fitsOnDisk: null,
    },
    warnings: [],
    suggestions: [],
    trace: [
      {
        setting: 'precision',
        value: r.precision,
        rule: 'fixture',
        pack: 'fixture',
        layer: 'core',
        facts: { computeCapability: r.computeCapability },
        reason: 'hand-built fixture',
      },
    ],
  }
  return TrainingPlanSchema.parse(plan)
}

const base = {
  hostMemoryGiB: 64,
  nodes: 1,
  offload: 'none',
  sharding: 'none',
  gradCheckpointing: false,
  compile: true,
  tf32: true,
  pinMemory: true,
  tokensPerParam: 20,
} as const

const gpt124m = {
  name: 'gpt-124m',
  layers: 12,
  hidden: 768,
  heads: 12,
  kvHeads: 12,
  ffn: 3072,
  vocab: 50304,
  layout: 'gpt2',
} as const
const gpt45m = {
  name: 'gpt-45m',
  layers: 8,
  hidden: 512,
  heads: 8,
  kvHeads: 8,
  ffn: 2048,
  vocab: 50304,
  layout: 'gpt2',
} as const

/** The fixture machines; their plans are written to test/fixtures/plans/<name>.json. */
export const PLAN_RECIPES: Record<string, PlanRecipe> = {
  'rtx4090-bf16': {
    ...base,
    mode: 'balanced',
    summary: 'NVIDIA GeForce RTX 4090 24 GB, AMD Ryzen 9 7950X, 64 GB RAM',
    gpuName: 'NVIDIA GeForce RTX 4090',
    gpus: 1,
    computeCapability: '8.9',
    deviceMemoryGiB: 24,
    device: 'cuda',
    backend: 'nccl',
    precision: 'bf16-mixed',
    strategy: 'single',
    microBatch: 16,
    gradAccum: 4,
    seq: 1024,
    model: gpt124m,
    threads: 8,
    workers: 8,
    tokensPerSecondPerDevice: 120_000,
    watts: 380,
    tdpWatts: 450,
  },
  'a100x4-zero2': {
    ...base,
    mode: 'extreme',
    summary: '4x NVIDIA A100-SXM4-40GB (NVLink), 2x AMD EPYC 7742, 512 GB RAM',
    hostMemoryGiB: 512,
    gpuName: 'NVIDIA A100-SXM4-40GB',
    gpus: 4,
    computeCapability: '8.0',
    deviceMemoryGiB: 40,
    device: 'cuda',
    backend: 'nccl',
    precision: 'bf16-mixed',
    strategy: 'zero',
    sharding: 'zero2',
    microBatch: 8,
    gradAccum: 8,
    seq: 2048,
    model: {
      name: 'llama-370m',
      layers: 24,
      hidden: 1024,
      heads: 16,
      kvHeads: 8,
      ffn: 2816,
      vocab: 32000,
      layout: 'llama',
    },
    threads: 8,
    workers: 8,
    tokensPerSecondPerDevice: 60_000,
    tokensPerParam: 25,
    watts: 1600,
    tdpWatts: 1600,
  },
  'h100x8-fsdp-2nodes': {
    ...base,
    mode: 'extreme',
    summary: '8x NVIDIA H100 80GB HBM3 (NVLink), 2x Intel Xeon Platinum 8480+, 2 TB RAM',
    hostMemoryGiB: 2048,
    nodes: 2,
    gpuName: 'NVIDIA H100 80GB HBM3',
    gpus: 8,
    computeCapability: '9.0',
    deviceMemoryGiB: 80,
    device: 'cuda',
    backend: 'nccl',
    precision: 'bf16-mixed',
    strategy: 'fsdp',
    sharding: 'fsdp',
    gradCheckpointing: true,
    microBatch: 4,
    gradAccum: 4,
    seq: 4096,
    model: {
      name: 'llama-1.3b',
      layers: 24,
      hidden: 2048,
      heads: 16,
      kvHeads: 4,
      ffn: 5632,
      vocab: 32000,
      layout: 'llama',
    },
    threads: 12,
    workers: 6,
    tokensPerSecondPerDevice: 28_000,
    tokensPerParam: 25,
    watts: 11_200,
    tdpWatts: 11_200,
  },
  't4-fp16': {
    ...base,
    mode: 'conservative',
    summary: 'NVIDIA Tesla T4 16 GB, Intel Xeon @ 2.20GHz (4 vCPU), 16 GB RAM',
    hostMemoryGiB: 16,
    gpuName: 'Tesla T4',
    gpus: 1,
    computeCapability: '7.5',
    deviceMemoryGiB: 15,
    device: 'cuda',
    backend: 'nccl',
    precision: 'fp16-mixed',
    strategy: 'single',
    compile: false,
    tf32: false,
    microBatch: 8,
    gradAccum: 16,
    seq: 512,
    model: gpt45m,
    threads: 3,
    workers: 3,
    tokensPerSecondPerDevice: 25_000,
    tokensPerParam: 12,
    watts: 28,
    tdpWatts: 70,
  },
  'cpu-2core': {
    ...base,
    mode: 'conservative',
    summary: 'CPU only: Intel Xeon 2 cores, 8 GB RAM',
    hostMemoryGiB: 8,
    gpuName: null,
    gpus: 0,
    computeCapability: null,
    deviceMemoryGiB: 8,
    device: 'cpu',
    backend: 'gloo',
    precision: 'fp32',
    strategy: 'cpu',
    compile: false,
    tf32: false,
    pinMemory: false,
    microBatch: 4,
    gradAccum: 8,
    seq: 512,
    model: {
      name: 'gpt-23m',
      layers: 4,
      hidden: 384,
      heads: 6,
      kvHeads: 6,
      ffn: 1536,
      vocab: 50304,
      layout: 'gpt2',
    },
    threads: 2,
    workers: 0,
    tokensPerSecondPerDevice: 900,
    tokensPerParam: 10,
    watts: 35,
    tdpWatts: 65,
  },
  'm2-mps': {
    ...base,
    mode: 'conservative',
    summary: 'Apple M2 (10-core GPU), 16 GB unified memory',
    hostMemoryGiB: 16,
    gpuName: 'Apple M2',
    gpus: 1,
    computeCapability: null,
    deviceMemoryGiB: 10,
    device: 'mps',
    backend: 'mps',
    precision: 'fp16-mixed',
    strategy: 'single',
    compile: false,
    tf32: false,
    pinMemory: false,
    microBatch: 4,
    gradAccum: 8,
    seq: 512,
    model: gpt45m,
    threads: 4,
    workers: 2,
    tokensPerSecondPerDevice: 6_000,
    tokensPerParam: 12,
    watts: 15,
    tdpWatts: 22,
  },
}

export const FIXTURE_NAMES = Object.keys(PLAN_RECIPES)

export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`../fixtures/plans/${name}.json`, import.meta.url))
}

/** The committed fixture plan, parsed by the real schema. */
export function loadFixturePlan(name: string): TrainingPlan {
  return TrainingPlanSchema.parse(JSON.parse(readFileSync(fixturePath(name), 'utf8')))
}
