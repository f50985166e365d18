import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  CURRENT_STACK_VERSION,
  EstimateResult,
  processesPerNode,
  SHIPPED_TUNING,
  type TrainingPlan,
} from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { workspaceFixture } from './helpers/workspace-fixtures.js'

const bin = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const configHome = mkdtempSync(join(tmpdir(), 'rigfit-config-'))

function run(command: string, args: string[]) {
  const result = spawnSync(process.execPath, [bin, command, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', XDG_CONFIG_HOME: configHome },
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}
const rigfit = (...args: string[]) => run('estimate', args)

const base = ['--model', 'llama-3.1-8b', '--seq', '2048', '--micro-batch', '1']

describe('rigfit estimate', () => {
  it('--json gives the share of the matmul efficiency each device sustains, from its published GEMM rate', () => {
    const hopper = SHIPPED_TUNING.hopperSustainedShare
    const expected: Record<string, number> = {
      T4: 24 / 65 / 0.869,
      B200: (hopper * 0.776) / 0.803,
      GB200: (hopper * 0.729) / 0.803,
      'H100 SXM': hopper,
      MI300X: 0.514 / 0.869,
      'M1 Max': 7824 / 10617 / 0.869,
      'RTX 4090': 1,
    }
    for (const [gpu, share] of Object.entries(expected)) {
      const args = [
        '--model',
        'llama-3.2-1b',
        '--seq',
        '1024',
        '--micro-batch',
        '2',
        '--precision',
        'fp16-mixed',
      ]
      const r = rigfit(...args, '--gpu', gpu, '--json')
      expect(r.code, `${gpu}: ${r.stderr}`).toBe(0)
      const out = EstimateResult.parse(JSON.parse(r.stdout))
      expect(out.speed?.sustainedShare, gpu).toBeCloseTo(share, 9)
    }
  })

  it('--json prints the EstimateResult contract; fit and speed stay null without a device', () => {
    const r = rigfit(...base, '--json')
    expect(r.code).toBe(0)
    const out = EstimateResult.parse(JSON.parse(r.stdout))
    expect(out.params.total).toBe(8_030_261_248)
    expect(out.fits).toBeNull()
    expect(out.capacity).toBeNull()
    expect(out.throughput).toBeNull()
    for (const value of Object.values(out.perDevice)) expect(Number.isInteger(value)).toBe(true)
  })

  it('--vram alone answers whether it fits', () => {
    const small = JSON.parse(rigfit(...base, '--vram', '24', '--json').stdout)
    expect(small).toMatchObject({ fits: false, capacity: 24 * 2 ** 30, throughput: null })
    const lora = JSON.parse(
      rigfit(
        ...base,
        '--lora-rank',
        '16',
        '--quant',
        'nf4',
        '--precision',
        'bf16-true',
        '--grad-ckpt',
        '--vram',
        '24',
        '--json',
      ).stdout,
    )
    expect(lora.fits).toBe(true)
    expect(lora.params.trainable).toBeLessThan(1e8)
  })

  it('--gpu adds the catalog GPU, speed and the fit', () => {
    // Checkpointed, so that it fits even by the widest band measured for full training on several GPUs.
    const r = rigfit(
      ...base,
      '--gpu',
      'A100 80GB',
      '--gpus',
      '8',
      '--sharding',
      'fsdp',
      '--grad-ckpt',
      '--json',
    )
    expect(r.code, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout)
    expect(out.capacity).toBeGreaterThan(79 * 2 ** 30)
    expect(out.fits).toBe(true)
    expect(out.throughput.tokensPerSecond).toBeCloseTo(8 * out.throughput.tokensPerSecondPerDevice, 3)
  })

  it('prints a breakdown with the largest term marked and a one-line verdict', () => {
    const r = rigfit(...base, '--vram', '24')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('◀ largest')
    expect(r.stdout).toContain('total (as nvidia-smi shows)')
    expect(r.stdout).toMatch(/✗ Does not fit: needs [\d.]+ GiB of 24.00 GiB/)
    expect(rigfit('--model', 'gpt2', '--seq', '1024', '--micro-batch', '4', '--vram', '24').stdout).toMatch(
      /✓ Fits: .* headroom/,
    )
  })

  it('--[no-]compile changes the speed, not the memory; --[no-]upcast-logits moves fp32 logits in pure bf16', () => {
    const gpu = ['--model', 'llama-3.2-1b', '--seq', '1024', '--micro-batch', '2', '--gpu', 'H100 SXM5 80GB']
    const json = (...args: string[]) =>
      EstimateResult.parse(JSON.parse(rigfit(...gpu, ...args, '--json').stdout))
    const compiled = json('--compile')
    const eager = json('--no-compile')
    expect(compiled.perDevice).toEqual(eager.perDevice)
    expect(compiled.throughput?.tokensPerSecond).toBeGreaterThan(eager.throughput?.tokensPerSecond ?? 0)
    // The default stack, Transformers' Trainer, does not compile (torch_compile=False), and its loss upcasts.
    expect(json().throughput?.tokensPerSecond).toBe(eager.throughput?.tokensPerSecond)
    expect(json().stack).toBe(`hf@${CURRENT_STACK_VERSION.hf}`)
    const upcast = json('--precision', 'bf16-true')
    const bf16 = json('--precision', 'bf16-true', '--no-upcast-logits')
    expect(upcast.perDevice.logits).toBeGreaterThan(bf16.perDevice.logits)
    expect(upcast.perDevice.weights).toBe(bf16.perDevice.weights)
    expect(json('--precision', 'bf16-true', '--stack', 'litgpt').perDevice.logits).toBeLessThan(
      upcast.perDevice.logits,
    )
  })

  it("--adapter-dtype: PEFT's fp32 adapters on a bf16 base need more memory and run slower than LitGPT's bf16 ones", () => {
    const args = [
      '--model',
      'qwen2.5-1.5b',
      '--seq',
      '1024',
      '--micro-batch',
      '2',
      '--precision',
      'bf16-true',
    ]
    const lora = [...args, '--lora-rank', '16', '--lora-targets', 'q,k,v,o', '--gpu', 'RTX 4090']
    const json = (...extra: string[]) =>
      EstimateResult.parse(JSON.parse(rigfit(...lora, ...extra, '--json').stdout))
    const peft = json()
    expect(json('--adapter-dtype', 'fp32')).toEqual(peft)
    const litgpt = json('--adapter-dtype', 'model')
    expect(peft.perDevice.gradients).toBe(2 * litgpt.perDevice.gradients)
    expect(peft.perDevice.activations).toBeGreaterThan(litgpt.perDevice.activations)
    expect(peft.throughput?.tokensPerSecond).toBeLessThan(litgpt.throughput?.tokensPerSecond ?? 0)
    const bad = rigfit(...lora, '--adapter-dtype', 'bf16')
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toMatch(/adapter-dtype/)
    expect(bad.stderr).toMatch(/fp32, model/)
    const noLora = rigfit(...args, '--adapter-dtype', 'model')
    expect(noLora.code).not.toBe(0)
    expect(noLora.stderr).toMatch(/lora-rank/)
  })

  it('lists the catalog', () => {
    const out = JSON.parse(rigfit('--list-models', '--json').stdout)
    expect(out.models.map((m: { id: string }) => m.id)).toContain('mixtral-8x7b')
  })

  it('suggests close catalog ids for an unknown model', () => {
    const r = rigfit('--model', 'lama-3.1-8b', '--seq', '2048', '--micro-batch', '1')
    expect(r.code).toBe(3)
    expect(r.stderr).toContain('E_MODEL_UNKNOWN')
    expect(r.stderr).toContain('llama-3.1-8b')
  })

  it('names the field a config.json lacks where its model type has no Transformers default', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rigfit-estimate-'))
    const file = join(dir, 'config.json')
    writeFileSync(
      file,
      JSON.stringify({
        model_type: 'my_llama',
        hidden_act: 'silu',
        rms_norm_eps: 1e-5,
        hidden_size: 4096,
        num_hidden_layers: 32,
        vocab_size: 32000,
      }),
    )
    const r = rigfit('--model', file, '--seq', '512', '--micro-batch', '1', '--json')
    expect(r.code).toBe(3)
    const error = JSON.parse(r.stdout).error
    expect(error.code).toBe('E_MODEL_CONFIG')
    expect(error.message).toContain('"num_attention_heads"')
  })

  it('rejects bad flag values with a suggestion', () => {
    const cases: [string[], RegExp][] = [
      [[...base, '--precision', 'fp8'], /fp8/],
      [[...base, '--lora-rank', '8', '--lora-targets', 'q,x'], /"x"/],
      [[...base, '--quant', 'nf4'], /--quant nf4/],
      [[...base, '--lora-targets', 'q'], /--lora-rank/],
      [[...base, '--vram', 'lots'], /--vram "lots"/],
      [['--model', 'gpt2', '--seq', '4096', '--micro-batch', '1'], /1024 positions/],
      [['--model', 'gpt2', '--micro-batch', '1'], /--seq is required/],
    ]
    for (const [args, message] of cases) {
      const r = rigfit(...args)
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stderr, args.join(' ')).toMatch(message)
    }
    const unknownGpu = rigfit(...base, '--gpu', 'Voodoo 5 6000')
    expect(unknownGpu.code).toBe(3)
    expect(unknownGpu.stderr).toContain('E_GPU_UNKNOWN')
  })
})

/** A plan's training point as `rigfit estimate` flags: every setting that decides memory and speed. */
function pointFlags(plan: TrainingPlan): string[] {
  const s = plan.settings
  return [
    '--seq',
    String(s.seq),
    '--micro-batch',
    String(s.microBatch),
    '--grad-accum',
    String(s.gradAccum),
    '--precision',
    s.precision,
    '--optimizer',
    s.optimizer,
    '--attention',
    s.attention,
    '--sharding',
    s.sharding,
    '--offload',
    s.offload,
    '--nodes',
    String(s.nodes),
    ...(s.device === 'cpu' ? [] : ['--gpus', String(processesPerNode(s))]),
    ...(s.gradCheckpointing ? ['--grad-ckpt'] : []),
    ...(s.lora ? ['--lora-rank', String(s.lora.rank), '--lora-targets', s.lora.targets.join(',')] : []),
    '--quant',
    s.quant,
    // What the plan decided beyond the stack's defaults, as a user reproducing it types them.
    ...(plan.stack ? ['--stack', plan.stack] : []),
    s.compile.enabled ? '--compile' : '--no-compile',
    s.tf32 ? '--tf32' : '--no-tf32',
    s.fusedOptimizer ? '--fused-optimizer' : '--no-fused-optimizer',
  ]
}

describe('rigfit estimate agrees with rigfit plan', () => {
  const machines = workspaceFixture('@rigfit/core', 'machines')
  // Each case: the machine as both commands name it, and the workload of the plan.
  const cases: { name: string; hardware: string[]; workload: string[] }[] = [
    {
      name: 'p4d.24xlarge, Llama-3.1-8B balanced (8 × A100 on NVLink)',
      hardware: ['--instance', 'p4d.24xlarge'],
      workload: ['--model', 'llama-3.1-8b', '--mode', 'balanced'],
    },
    {
      name: 'RTX 4090, Llama-3.1-8B LoRA extreme',
      hardware: ['--gpu', 'RTX 4090'],
      workload: ['--model', 'llama-3.1-8b', '--method', 'lora', '--mode', 'extreme'],
    },
    {
      name: '2 nodes × 8 H100 (what-if, NVLink from the catalog)',
      hardware: ['--gpu', 'H100', '--gpus', '8'],
      workload: ['--model', 'llama-3.1-8b', '--nodes', '2', '--mode', 'balanced'],
    },
    {
      name: '4 × A100 40GB server, QLoRA conservative',
      hardware: ['--from', join(machines, 'server-4x-a100-40gb.json')],
      workload: ['--model', 'llama-3.1-8b', '--method', 'qlora', '--mode', 'conservative'],
    },
    {
      name: 'CPU-only VM, GPT-2 balanced',
      hardware: ['--from', join(machines, 'vm-2core-xeon.json')],
      workload: ['--model', 'gpt2', '--mode', 'balanced'],
    },
  ]

  it.each(cases)('$name: same memory per device and tokens/s', ({ hardware, workload }) => {
    const planned = run('plan', [...hardware, ...workload, '--json'])
    expect(planned.code, planned.stdout + planned.stderr).toBe(0)
    const plan = JSON.parse(planned.stdout) as TrainingPlan
    const model = workload[workload.indexOf('--model') + 1] as string
    expect(plan.stack).toBe(`hf@${CURRENT_STACK_VERSION.hf}`)
    for (const extra of [[]]) {
      // The plan's GPU count comes back through pointFlags.
      const machine = hardware.filter((_, i) => hardware[i] !== '--gpus' && hardware[i - 1] !== '--gpus')
      const args = ['--model', model, ...machine, ...pointFlags(plan), ...extra, '--json']
      const estimated = rigfit(...args)
      expect(estimated.code, estimated.stdout + estimated.stderr).toBe(0)
      const out = EstimateResult.parse(JSON.parse(estimated.stdout))
      expect(out.perDevice.total, args.join(' ')).toBe(plan.memory.perDevice.total)
      expect(out.perDevice.peakAllocated).toBe(plan.memory.perDevice.peakAllocated)
      expect(out.throughput?.tokensPerSecond, args.join(' ')).toBeCloseTo(plan.throughput.tokensPerSecond, 6)
      expect(out.throughput?.stepSeconds).toBeCloseTo(plan.throughput.stepSeconds, 9)
    }
  })

  it("takes the link of what-if GPUs from the catalog, and the optimizer step and TF32 from the stack's defaults", () => {
    const point = ['--model', 'llama-3.1-8b', '--seq', '2048', '--micro-batch', '1', '--sharding', 'fsdp']
    const settings = (...args: string[]) => rigfit(...point, ...args).stdout.split('\n')[2] ?? ''
    // Current Transformers defaults to adamw_torch_fused and leaves TF32 off; LitGPT sets TF32 and runs foreach.
    expect(settings('--gpu', 'H100', '--gpus', '8')).toMatch(/8 GPUs · nvlink link · fused optimizer/)
    expect(settings('--gpu', 'H100', '--gpus', '8')).not.toMatch(/TF32/)
    expect(settings('--gpu', 'H100', '--gpus', '8', '--stack', 'litgpt')).toMatch(/TF32/)
    expect(settings('--gpu', 'H100', '--gpus', '8', '--stack', 'litgpt')).not.toMatch(/fused optimizer/)
    expect(settings('--gpu', 'RTX 4090', '--gpus', '2')).toMatch(/2 GPUs · pcie link/)
    expect(settings('--gpu', 'H100', '--gpus', '8', '--no-fused-optimizer', '--no-tf32')).not.toMatch(
      /fused optimizer|TF32/,
    )
    const speed = (...args: string[]) =>
      JSON.parse(rigfit(...point, ...args, '--json').stdout).throughput.tokensPerSecond as number
    const oneNode = speed('--gpu', 'H100', '--gpus', '8')
    expect(speed('--gpu', 'H100', '--gpus', '8', '--fused-optimizer', '--no-tf32')).toBe(oneNode)
    // A second node adds network traffic: never a full doubling of one node's speed.
    const twoNodes = speed('--gpu', 'H100', '--gpus', '8', '--nodes', '2')
    expect(twoNodes).toBeGreaterThan(oneNode)
    expect(twoNodes).toBeLessThan(2 * oneNode)
  })
})
