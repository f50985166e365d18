import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { type TrainingPlan, TrainingPlan as TrainingPlanSchema } from '@rigfit/core'
import type { PlanRecipe } from './planner-plan.js'

/**
 * The committed fixture plans (test/fixtures/plans/<name>.json) and the `rigfit plan` request each one is the
 * planner's answer to; plan-fixtures.test.ts keeps them equal. `shape` is what the name promises, checked there.
 */
export const FIXTURE_RECIPES: Record<
  string,
  { recipe: PlanRecipe; shape: Partial<TrainingPlan['settings']> }
> = {
  'rtx4090-bf16': {
    recipe: { machine: 'desktop-rtx4090', mode: 'balanced' },
    shape: { device: 'cuda', gpus: 1, precision: 'bf16-mixed', strategy: 'single' },
  },
  'a100x4-zero2': {
    recipe: { machine: 'server-4x-a100-40gb', mode: 'conservative', model: 'qwen2.5-1.5b', method: 'full' },
    shape: { gpus: 4, strategy: 'zero', sharding: 'zero2' },
  },
  'h100x8-fsdp-2nodes': {
    recipe: {
      machine: 'dgx-8x-h100',
      mode: 'extreme',
      model: 'mixtral-8x7b',
      method: 'full',
      nodes: 2,
      sharding: 'fsdp',
    },
    shape: { gpus: 8, nodes: 2, strategy: 'fsdp', sharding: 'fsdp' },
  },
  'a100x4-lora-fsdp-offload-2nodes': {
    recipe: {
      machine: 'server-4x-a100-40gb',
      mode: 'extreme',
      model: 'llama-3.1-70b',
      method: 'lora',
      nodes: 2,
      sharding: 'fsdp',
    },
    shape: { gpus: 4, nodes: 2, method: 'lora', strategy: 'fsdp', sharding: 'fsdp', offload: 'all' },
  },
  't4-fp16': {
    recipe: { machine: 'cloud-t4', mode: 'conservative' },
    shape: { gpus: 1, precision: 'fp16-mixed', strategy: 'single' },
  },
  'cpu-2core': {
    recipe: { machine: 'vm-2core-xeon', mode: 'conservative' },
    shape: { device: 'cpu', gpus: 0, precision: 'fp32', strategy: 'cpu' },
  },
  'm2-mps': {
    recipe: { machine: 'macbook-m2-16gb', mode: 'conservative' },
    shape: { device: 'mps', gpus: 1, strategy: 'single' },
  },
  'rtx4090-qlora-zero-offload': {
    recipe: { machine: 'desktop-rtx4090', mode: 'extreme', model: 'mixtral-8x7b', method: 'qlora' },
    shape: {
      gpus: 1,
      method: 'qlora',
      quant: 'nf4',
      strategy: 'zero-offload',
      sharding: 'zero3',
      offload: 'all',
    },
  },
  'a100x4-zero3-optimizer-offload': {
    recipe: { machine: 'server-4x-a100-40gb', mode: 'conservative', model: 'llama-3.1-8b', method: 'full' },
    shape: { gpus: 4, method: 'full', strategy: 'zero', sharding: 'zero3', offload: 'optimizer' },
  },
  'rtx3090x2-lora-fsdp': {
    recipe: { machine: 'workstation-2x-rtx3090', mode: 'balanced', model: 'mistral-7b', method: 'lora' },
    shape: { gpus: 2, method: 'lora', strategy: 'fsdp', sharding: 'fsdp' },
  },
}

export const FIXTURE_NAMES = Object.keys(FIXTURE_RECIPES)

export function fixturePath(name: string): string {
  return fileURLToPath(new URL(`../fixtures/plans/${name}.json`, import.meta.url))
}

/** The committed fixture plan, parsed by the real schema. */
export function loadFixturePlan(name: string): TrainingPlan {
  return TrainingPlanSchema.parse(JSON.parse(readFileSync(fixturePath(name), 'utf8')))
}
