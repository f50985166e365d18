import { parse } from 'yaml'
import { readPyDict } from '../../src/formats/pytorch.js'
import type { ExportFile } from '../../src/types.js'

/** The optimizer a set of exported files asks for, read as the target tool reads it. */
export interface ExportedOptimizer {
  lr: number
  beta1: number
  beta2: number
  epsilon: number
  weightDecay: number
  warmupSteps: number
  gradClip: number
}

type Json = Record<string, unknown>
const find = (files: ExportFile[], path: string) => files.find((f) => f.path === path)
const json = (files: ExportFile[], path: string): Json | null => {
  const f = find(files, path)
  return f ? (JSON.parse(f.content) as Json) : null
}
const yaml11 = (text: string) => parse(text, { version: '1.1' }) as Json

/**
 * The bundled plan as the example trainer (examples/pytorch/rigfit_plan.py) reads it: settings.optimization, or
 * pretraining's AdamW for a plan without it.
 */
function fromPlanFile(files: ExportFile[]): ExportedOptimizer | null {
  const plan = json(files, 'rigfit-plan.json')
  if (!plan) return null
  const s = plan.settings as Json
  const o = s.optimization as Json | undefined
  if (!o) return null
  return {
    lr: s.learningRate as number,
    beta1: o.beta1 as number,
    beta2: o.beta2 as number,
    epsilon: o.epsilon as number,
    weightDecay: o.weightDecay as number,
    warmupSteps: o.warmupSteps as number,
    gradClip: o.gradClip as number,
  }
}

/** A DeepSpeed config's own optimizer, schedule and clipping, where it states them (not `auto`). */
function overDeepSpeed(base: ExportedOptimizer | null, ds: Json | null): ExportedOptimizer | null {
  if (!base || !ds) return base
  const p = ((ds.optimizer as Json | undefined)?.params ?? {}) as Json
  const warmup = (((ds.scheduler as Json | undefined)?.params ?? {}) as Json).warmup_num_steps
  const betas = Array.isArray(p.betas) ? (p.betas as number[]) : null
  const num = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback)
  return {
    lr: num(p.lr, base.lr),
    beta1: betas ? (betas[0] as number) : base.beta1,
    beta2: betas ? (betas[1] as number) : base.beta2,
    epsilon: num(p.eps, base.epsilon),
    weightDecay: num(p.weight_decay, base.weightDecay),
    warmupSteps: num(warmup, base.warmupSteps),
    gradClip: num(ds.gradient_clipping, base.gradClip),
  }
}

/** The reader's values in one order: lr, betas, epsilon, weight decay, warm-up steps, clipping. */
function optimizer(lr: unknown, betas: unknown, rest: unknown[]): ExportedOptimizer {
  const [beta1, beta2] = betas as [number, number]
  const [epsilon, weightDecay, warmupSteps, gradClip] = rest as number[]
  return {
    lr: lr as number,
    beta1,
    beta2,
    epsilon: epsilon as number,
    weightDecay: weightDecay as number,
    warmupSteps: warmupSteps as number,
    gradClip: gradClip as number,
  }
}

const readHf = (files: ExportFile[]) => {
  const a = json(files, 'training_args.json') as Json
  return optimizer(
    a.learning_rate,
    [a.adam_beta1, a.adam_beta2],
    [a.adam_epsilon, a.weight_decay, a.warmup_steps, a.max_grad_norm],
  )
}

const readLightning = (files: ExportFile[]) => {
  const c = yaml11(find(files, 'lightning_config.yaml')?.content ?? '')
  const init = ((c.optimizer as Json | undefined)?.init_args ?? null) as Json | null
  if (!init) return null
  const warmup = (c.model as Json).warmup_steps
  return optimizer(init.lr, init.betas, [
    init.eps,
    init.weight_decay,
    warmup,
    (c.trainer as Json).gradient_clip_val,
  ])
}

/** Hydra's `optimization` group and the pytorch module's SETTINGS use the same names. */
const fromNamed = (o: Json) =>
  optimizer(o.learning_rate, o.adam_betas, [o.adam_epsilon, o.weight_decay, o.warmup_steps, o.max_grad_norm])

const OPTIMIZER_LINE =
  /^# Optimizer: \S+ lr=(\S+) betas=\((\S+), (\S+)\) eps=(\S+) weight_decay=(\S+) warmup_steps=(\d+) max_grad_norm=([\d.e-]+);/m

const READERS: Record<string, (files: ExportFile[]) => ExportedOptimizer | null> = {
  hf: readHf,
  lightning: readLightning,
  hydra: (files) => fromNamed(yaml11(files[0]?.content ?? '').optimization as Json),
  pytorch: (files) => fromNamed(readPyDict(files[0]?.content ?? '', 'SETTINGS') as Json),
  kconfig: (files) => {
    const m = OPTIMIZER_LINE.exec(files[0]?.content ?? '')
    if (!m) return null
    const [lr, beta1, beta2, ...rest] = m.slice(1).map(Number)
    return optimizer(lr, [beta1, beta2], rest)
  },
}

/**
 * Reads back the optimizer one format's files ask for; null where the format does not state one. The launcher
 * formats (accelerate, deepspeed, torchrun, slurm, rigfit) carry the plan, over which a DeepSpeed config's own
 * values win.
 */
export function readOptimizer(format: string, files: ExportFile[]): ExportedOptimizer | null {
  const reader = READERS[format]
  return reader ? reader(files) : overDeepSpeed(fromPlanFile(files), json(files, 'ds_config.json'))
}
