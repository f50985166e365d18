import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BUDGET_TOLERANCE } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { rigfit, rigfitJson } from './helpers/run-cli.js'

// biome-ignore lint/suspicious/noExplicitAny: plans read back from the CLI's JSON output
type Json = any

const README = fileURLToPath(new URL('../../../README.md', import.meta.url))
const GIB = 2 ** 30

interface WorkedExample {
  args: string[]
  /** The output lines the README shows, in order; `...` stands for lines left out. */
  shown: string[]
}

/** The `console` blocks between the README's questions markers: a `$ rigfit ...` line, then its output. */
function workedExamples(): WorkedExample[] {
  const readme = readFileSync(README, 'utf8')
  const section = /<!-- questions:start -->([\s\S]*?)<!-- questions:end -->/.exec(readme)?.[1]
  if (!section)
    throw new Error('README.md has no <!-- questions:start --> ... <!-- questions:end --> section')
  return [...section.matchAll(/```console\n([\s\S]*?)```/g)].map((match) => {
    const [command = '', ...shown] = (match[1] as string).trimEnd().split('\n')
    if (!command.startsWith('$ rigfit ')) throw new Error(`a worked example starts with "${command}"`)
    // Words, or "double-quoted words" as a shell reads them.
    const args = [...command.slice('$ rigfit '.length).matchAll(/"([^"]*)"|(\S+)/g)].map(
      (word) => (word[1] ?? word[2]) as string,
    )
    return { args, shown }
  })
}

/** Every format a plan exports to. */
const FORMATS = [
  'hf',
  'accelerate',
  'deepspeed',
  'torchrun',
  'slurm',
  'lightning',
  'hydra',
  'kconfig',
  'pytorch',
]

/** Formats whose launchers need CUDA or ROCm ranks, or a cluster that schedules them. */
const NVIDIA_STACK_ONLY = ['deepspeed', 'slurm']

/** What an expert checks first in each answer, by question. */
const EXPERT_CHECKS: ((plan: Json) => void)[] = [
  // One RTX 4090, LoRA-style fine-tune of Llama-3-8B on 50k examples of ~1k tokens.
  (plan) => {
    expect(['lora', 'qlora']).toContain(plan.settings.method)
    expect(plan.settings.seq).toBeGreaterThanOrEqual(1024)
    expect(plan.tokens.binding).toBe('dataset')
    expect(plan.tokens.budget).toBeGreaterThan(50e6 - plan.settings.effectiveBatch * plan.settings.seq)
    expect(plan.time.steps).toBeGreaterThanOrEqual(300)
    expect(plan.settings.learningRate).toBe(2e-4)
    // Adapters train with QLoRA's optimizer, not pretraining's betas and weight decay.
    expect(plan.settings.optimization).toMatchObject({ beta2: 0.999, weightDecay: 0 })
  },
  // 8x H100, pretrain a 1B model on 20B tokens.
  (plan) => {
    expect(plan.workload.kind).toBe('pretrain')
    expect(Math.abs(plan.params.total - 1e9) / 1e9).toBeLessThan(0.1)
    expect(plan.settings.gpus).toBe(8)
    expect(plan.tokens.binding).toBe('target')
    expect(plan.tokens.budget).toBeGreaterThan(20e9 - plan.settings.effectiveBatch * plan.settings.seq)
    // A shape people pick (grouped-query attention, hidden a multiple of 128), at the scaling law's batch and rate:
    // about 1M tokens a step at a peak near 1e-3 (DeepSeek LLM), not 160 sequences at 2e-4.
    expect(plan.model.hidden % 128).toBe(0)
    expect(plan.model.kvHeads).toBeLessThan(plan.model.heads)
    expect(plan.settings.effectiveBatch * plan.settings.seq).toBeGreaterThan(0.5e6)
    expect(plan.settings.learningRate).toBeGreaterThan(5e-4)
  },
  // MacBook M2 with 16 GB.
  (plan) => {
    expect(plan.settings.device).toBe('mps')
    expect(plan.memory.capacityBytes).toBeLessThanOrEqual(Math.floor((16 * GIB * 2) / 3))
    expect(plan.settings.threads).toBeLessThanOrEqual(8) // the M2's CPU cores
  },
  // 2 nodes of 4x A100 under SLURM: threads from the planned node's CPUs.
  (plan) => {
    expect(plan.settings).toMatchObject({ nodes: 2, gpus: 4 })
    expect(plan.settings.threads * 4).toBeLessThanOrEqual(64)
    expect(plan.settings.dataloader.workers * 4).toBeLessThanOrEqual(64)
    expect(plan.warnings.map((w: { id: string }) => w.id)).not.toContain('assumed-network')
  },
]

describe("the README's four questions, each answered by one command", () => {
  const examples = workedExamples()

  it('the README holds the four worked examples', () => {
    expect(examples).toHaveLength(EXPERT_CHECKS.length)
  })

  examples.forEach((example, index) => {
    it(`rigfit ${example.args.join(' ')}`, () => {
      const printed = rigfit(example.args)
      expect(printed.status, printed.stderr).toBe(0)
      // The output the README shows is the output a user gets, line for line, in order.
      const lines = printed.stdout.split('\n').map((line) => line.trimEnd())
      let at = 0
      for (const line of example.shown.filter((shown) => shown.trim() !== '...')) {
        const found = lines.indexOf(line.trimEnd(), at)
        expect(found, `README line not printed (in order): ${line}`).toBeGreaterThanOrEqual(0)
        at = found + 1
      }

      const plan = rigfitJson(example.args)
      // The mode's line is a target with a tolerance: a plan within it spares a mechanism (docs/plan.md).
      expect(plan.memory.usedFraction).toBeLessThanOrEqual(
        plan.memory.budgetFraction * (1 + BUDGET_TOLERANCE) + 1e-9,
      )
      EXPERT_CHECKS[index]?.(plan)

      // It exports to every trainer as planned.
      const dir = mkdtempSync(join(tmpdir(), 'rigfit-readme-question-'))
      for (const format of FORMATS) {
        const out = join(dir, format)
        const exported = rigfit([
          'export',
          ...example.args.slice(1),
          '--mode',
          plan.mode,
          '--format',
          format,
          '--out',
          out,
        ])
        // DeepSpeed and the cluster launchers run CUDA or ROCm ranks: a Mac's plan is refused by them, saying so.
        if (plan.settings.device !== 'cuda' && NVIDIA_STACK_ONLY.includes(format)) {
          expect(exported.stderr, format).toMatch(/E_FORMAT_UNSUPPORTED.*mps/)
          continue
        }
        expect(exported.status, `${format}: ${exported.stderr}`).toBe(0)
        if (format === 'rigfit') {
          const written = JSON.parse(readFileSync(join(out, 'rigfit-plan.json'), 'utf8'))
          expect(written.settings).toEqual(plan.settings)
        }
        if (format === 'hf') {
          const args = JSON.parse(readFileSync(join(out, 'training_args.json'), 'utf8'))
          expect(args).toMatchObject({
            per_device_train_batch_size: plan.settings.microBatch,
            gradient_accumulation_steps: plan.settings.gradAccum,
            max_steps: plan.time.steps,
            learning_rate: plan.settings.learningRate,
          })
        }
        if (format === 'slurm' && plan.settings.nodes > 1) {
          const sbatch = readdirSync(out).find((file) => file.endsWith('torchrun.sbatch')) as string
          expect(readFileSync(join(out, sbatch), 'utf8')).toMatch(
            new RegExp(`#SBATCH --nodes=${plan.settings.nodes}\\b`),
          )
        }
      }
    })
  })
})
