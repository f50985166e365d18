import { checkPlan, isRigfitError, type TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { exportPlan } from '../src/export-plan.js'
import { parsePlan } from '../src/load-plan.js'
import { loadFixturePlan } from './helpers/fixture-plans.js'

type Settings = TrainingPlan['settings']
const withSettings = (name: string, patch: Partial<Settings>): TrainingPlan => {
  const plan = loadFixturePlan(name)
  return { ...plan, settings: { ...plan.settings, ...patch } }
}
const fieldsOf = (plan: TrainingPlan) => checkPlan(plan).map((i) => i.field)

function refusal(fn: () => unknown): { code: string; message: string; suggestion?: string } {
  try {
    fn()
  } catch (error) {
    if (isRigfitError(error)) return error
    throw error
  }
  throw new Error('expected a RigfitError')
}

describe('plans that contradict themselves are refused', () => {
  it('names each contradiction by field', () => {
    expect(fieldsOf(withSettings('rtx4090-bf16', { effectiveBatch: 63 }))).toEqual([
      'settings.effectiveBatch',
    ])
    expect(fieldsOf(withSettings('t4-fp16', { precision: 'bf16-mixed' }))).toEqual(['settings.precision'])
    expect(fieldsOf(withSettings('t4-fp16', { tf32: true }))).toEqual(['settings.tf32'])
    expect(fieldsOf(withSettings('m2-mps', { tf32: true }))).toEqual(['settings.tf32'])
    expect(fieldsOf(withSettings('rtx4090-bf16', { offload: 'optimizer' }))).toEqual(['settings.offload'])
    expect(fieldsOf(withSettings('a100x4-zero2', { offload: 'all' }))).toEqual(['settings.offload'])
    expect(fieldsOf(withSettings('a100x4-zero2', { sharding: 'fsdp' }))).toEqual(['settings.sharding'])
    expect(fieldsOf(withSettings('cpu-2core', { precision: 'fp16-mixed' }))).toEqual(['settings.precision'])
    const shortModel = loadFixturePlan('rtx4090-bf16')
    expect(fieldsOf(withSettings('rtx4090-bf16', { seq: shortModel.model.maxPositions * 2 }))).toContain(
      'settings.seq',
    )
    expect(fieldsOf(withSettings('rtx4090-bf16', { method: 'lora' }))).toEqual(['settings.lora'])
    expect(
      fieldsOf(
        withSettings('cpu-2core', {
          dataloader: { workers: 0, pinMemory: false, prefetchFactor: 2, persistentWorkers: false },
        }),
      ),
    ).toEqual(['settings.dataloader'])
  })

  it('exportPlan refuses an inconsistent plan with a validation error and a suggestion', () => {
    const error = refusal(() =>
      exportPlan(withSettings('t4-fp16', { precision: 'bf16-mixed', tf32: true }), { format: 'hf' }),
    )
    expect(error.code).toBe('E_PLAN_INCONSISTENT')
    expect(error.message).toMatch(/settings\.precision bf16 needs compute capability 8\.0.*settings\.tf32/)
    expect(error.suggestion).toMatch(/rigfit plan/)
  })

  it('parsePlan names the file for bad JSON and for schema errors', () => {
    expect(refusal(() => parsePlan('{not json', 'plan.json'))).toMatchObject({
      code: 'E_PLAN_JSON',
      message: expect.stringMatching(/^plan\.json is not valid JSON/),
    })
    const plan = loadFixturePlan('rtx4090-bf16') as unknown as { settings: Record<string, unknown> }
    plan.settings.microBatch = 0
    const error = refusal(() => parsePlan(JSON.stringify(plan), 'plan.json'))
    expect(error.code).toBe('E_PLAN_INVALID')
    expect(error.message).toMatch(/settings\.microBatch/)
  })

  it('refuses a format that cannot express the plan, and unknown formats', () => {
    expect(refusal(() => exportPlan(loadFixturePlan('cpu-2core'), { format: 'deepspeed' }))).toMatchObject({
      code: 'E_FORMAT_UNSUPPORTED',
    })
    expect(refusal(() => exportPlan(loadFixturePlan('rtx4090-bf16'), { format: 'megatron' }))).toMatchObject({
      code: 'E_FORMAT_UNKNOWN',
      suggestion: expect.stringMatching(/hf, accelerate/),
    })
    expect(
      refusal(() =>
        exportPlan(
          withSettings('a100x4-zero2', { strategy: 'model-split', sharding: 'none', offload: 'none' }),
          {
            format: 'torchrun',
          },
        ),
      ),
    ).toMatchObject({ code: 'E_FORMAT_UNSUPPORTED' })
  })
})

describe('profile files', () => {
  it('names the file and the failing fields', async () => {
    const { mkdtemp, writeFile } = await import('node:fs/promises')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const { readProfileIoFacts } = await import('../src/load-plan.js')
    const dir = await mkdtemp(join(tmpdir(), 'rigfit-profile-'))
    await writeFile(join(dir, 'p.json'), '{"schemaVersion": 1}')
    await expect(readProfileIoFacts(join(dir, 'p.json'))).rejects.toMatchObject({
      code: 'E_PROFILE_INVALID',
      message: expect.stringContaining('p.json is not a valid HardwareProfile'),
    })
    await expect(readProfileIoFacts(join(dir, 'none.json'))).rejects.toMatchObject({ code: 'E_PROFILE_READ' })
  })
})
