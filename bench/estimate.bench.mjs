// Speed of the memory and throughput model (run after `pnpm build`): complete estimates per CPU-second on one core,
// as the planner calls it while searching candidates, and `rigfit estimate` end to end.
// Targets: at least 1,000,000 estimates per CPU-second; `rigfit estimate` under 300 ms.
import { spawnSync } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { EstimateInput, estimate, findCatalogModel } from '../packages/core/dist/index.js'

const device = {
  name: 'A100 80GB',
  kind: 'cuda',
  vramBytes: 80 * 2 ** 30,
  fp16TensorTflops: 312,
  fp32Tflops: 19.5,
  memoryBandwidthGBs: 2039,
  bf16: true,
  tf32: true,
  computeCapability: '8.0',
}
// A planner-like sweep: models x micro-batches x sequence lengths x precisions x checkpointing x LoRA.
const inputs = []
for (const id of ['gpt2', 'llama-3.1-8b', 'mixtral-8x7b', 'qwen2.5-0.5b', 'gemma-2-9b']) {
  const model = findCatalogModel(id)
  for (const microBatch of [1, 2, 4, 8]) {
    for (const seq of [512, 2048]) {
      for (const precision of ['bf16-mixed', 'bf16-true', 'fp32']) {
        for (const gradCheckpointing of [false, true]) {
          for (const lora of [null, { rank: 16, targets: ['q', 'k', 'v', 'o'], dropout: 0 }]) {
            inputs.push(
              EstimateInput.parse({
                model,
                seq,
                microBatch,
                precision,
                gradCheckpointing,
                lora,
                device,
                sharding: 'fsdp',
                gpus: 8,
              }),
            )
          }
        }
      }
    }
  }
}

// Per second of this process's CPU time, not of the clock: the figure stays the same on a machine that is busy
// with other work, where this process gets only part of a core.
function rate(seconds) {
  let sink = 0
  let n = 0
  const end = performance.now() + seconds * 1000
  const cpuBefore = process.cpuUsage()
  while (performance.now() < end) {
    for (let i = 0; i < inputs.length; i += 1) sink += estimate(inputs[i]).perDevice.total
    n += inputs.length
  }
  const cpu = process.cpuUsage(cpuBefore)
  if (sink === 0) throw new Error('no estimates')
  return n / ((cpu.user + cpu.system) / 1e6)
}

rate(0.5) // warm-up: let the JIT settle
const perSecond = rate(2)
console.log(
  `estimate(): ${Math.round(perSecond).toLocaleString('en-US')} complete estimates per CPU-second on one core (${inputs.length} distinct inputs, with throughput)`,
)

const cli = fileURLToPath(new URL('../apps/cli/bin/run.js', import.meta.url))
function wallMs(args) {
  const start = process.hrtime.bigint()
  const result = spawnSync(process.execPath, [cli, 'estimate', ...args], { encoding: 'utf8' })
  const ms = Number(process.hrtime.bigint() - start) / 1e6
  if (result.status !== 0)
    throw new Error(`rigfit estimate ${args.join(' ')} exited ${result.status}: ${result.stderr}`)
  return ms
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const cases = {
  cliVramMs: ['--model', 'llama-3.1-8b', '--seq', '2048', '--micro-batch', '1', '--vram', '80', '--json'],
  cliGpuMs: ['--model', 'llama-3.1-8b', '--seq', '2048', '--micro-batch', '1', '--gpu', 'A100 80GB'],
}
const figures = { estimatesPerSecond: Math.round(perSecond) }
for (const [name, args] of Object.entries(cases)) {
  wallMs(args)
  figures[name] = Math.round(median(Array.from({ length: 5 }, () => wallMs(args))))
  console.log(`rigfit estimate ${args.join(' ')}: ${figures[name]} ms end to end (median of 5)`)
}
console.log(JSON.stringify({ bench: 'estimate', ...figures }))
