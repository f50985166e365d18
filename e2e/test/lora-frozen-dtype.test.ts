import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  assertEngines,
  missingEngines,
  OPTIONAL,
  pythonWithTorch,
  REPO,
  TRAIN_PY,
  testEnv,
} from './helpers/engines.js'
import { run } from './helpers/processes.js'
import { planInto, rigfitJson, tinyModelDir } from './helpers/rigfit.js'

const python = pythonWithTorch()
const missing = missingEngines('lora-frozen-dtype', [
  { name: 'python3 with torch (python3-torch)', present: python !== undefined },
])

/** The dtypes of a checkpoint's frozen and trained parameters, as PyTorch loads them. */
async function checkpointDtypes(path: string): Promise<{ frozen: string[]; trained: string[] }> {
  const code = [
    'import json, sys, torch',
    'state = torch.load(sys.argv[1], map_location="cpu")',
    'dtypes = {name: str(t.dtype).replace("torch.", "") for name, t in state["model"].items()}',
    'lora = lambda name: "lora" in name.lower()',
    'print(json.dumps({"frozen": sorted({d for n, d in dtypes.items() if not lora(n)}),',
    '                  "trained": sorted({d for n, d in dtypes.items() if lora(n)})}))',
  ].join('\n')
  const result = await run(python as string, ['-c', code, path], { cwd: REPO, deadlineMs: 120_000 })
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

describe.skipIf(OPTIONAL && missing.length > 0)('a LoRA plan trains as it was priced', () => {
  // rigfit prices a frozen base in the compute half type under autocast; every export states that load dtype and
  // the example trainer keeps the base so, whatever the loader's default.
  it('plans LoRA on this machine, exports the load dtype and trains with the frozen base in it', {
    timeout: 600_000,
  }, async () => {
    assertEngines(missing)
    const dir = tinyModelDir('lora-dtype')
    await planInto(dir, [
      '--model',
      'config.json',
      '--method',
      'lora',
      '--seq',
      '128',
      '--target-batch',
      '8',
      '--time-budget',
      '5m',
    ])
    const plan = JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8'))
    expect(plan.settings.lora).not.toBeNull()
    const precision: string = plan.settings.precision
    const half = precision.startsWith('bf16')
      ? 'bfloat16'
      : precision.startsWith('fp16')
        ? 'float16'
        : 'float32'

    await rigfitJson(['export', '--plan', 'plan.json', '--format', 'hf', '--out', 'hf'], dir)
    const modelArgs = JSON.parse(readFileSync(join(dir, 'hf', 'model_args.json'), 'utf8'))
    expect(modelArgs.dtype).toBe(half)

    const trained = await run(
      python as string,
      [
        TRAIN_PY,
        '--plan',
        'plan.json',
        '--data',
        join(REPO, 'examples/pytorch/README.md'),
        '--max-steps',
        '2',
        '--out',
        'ckpt',
      ],
      { cwd: dir, env: testEnv(python as string), deadlineMs: 540_000 },
    )
    expect(trained.code, `${trained.stdout}\n${trained.stderr}`).toBe(0)
    const checkpoint = readdirSync(join(dir, 'ckpt'))
      .filter((f) => f.endsWith('.pt'))
      .sort()
      .at(-1) as string
    const dtypes = await checkpointDtypes(join(dir, 'ckpt', checkpoint))
    expect(dtypes.frozen).toEqual([half])
    expect(dtypes.trained).toEqual(['float32'])
  })
})
