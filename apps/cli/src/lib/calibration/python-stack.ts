import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { RigfitError } from '@rigfit/core'

/** The stacks `rigfit calibrate` can measure: rigfit's own trainer, and Transformers + PEFT's Trainer. */
export const CALIBRATE_STACKS = ['plain', 'hf'] as const
export type CalibrateStack = (typeof CALIBRATE_STACKS)[number]

/** The measuring script of each stack, and the modules it imports. */
const SCRIPTS: Record<CalibrateStack, { file: string; checkout: string }> = {
  plain: { file: 'train.py', checkout: 'examples/pytorch' },
  hf: { file: 'hf_stack.py', checkout: 'examples/calibrate' },
}

/** Python modules each stack needs, with what installs them. */
const NEEDS: Record<CalibrateStack, { module: string; install: string }[]> = {
  plain: [{ module: 'torch', install: 'pip install torch (Debian: apt-get install python3-torch)' }],
  hf: [
    { module: 'torch', install: 'pip install torch' },
    { module: 'transformers', install: 'pip install transformers' },
    { module: 'peft', install: 'pip install peft' },
  ],
}

/**
 * The script that measures a stack. The installed CLI carries the trainer beside its bundle (`bundle/trainer/`,
 * copied there at build time); run from a checkout, the files are in `examples/`.
 */
export function stackScript(stack: CalibrateStack): string {
  const { file, checkout } = SCRIPTS[stack]
  const beside = fileURLToPath(new URL(`../trainer/${file}`, import.meta.url))
  if (existsSync(beside)) return beside
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const candidate = join(dir, checkout, file)
    if (existsSync(candidate)) return candidate
  }
  throw new RigfitError(
    'io',
    'E_CALIBRATE_SCRIPT',
    `the ${stack} stack's measuring script (${file}) is not installed with rigfit`,
    {
      suggestion: 'Reinstall rigfit, or run it from a checkout after `pnpm build`.',
    },
  )
}

export interface PythonVersions {
  python: string
  torch: string
  [module: string]: string
}

const PROBE = `
import importlib, json, platform, sys
out = {"python": platform.python_version()}
missing = []
for name in sys.argv[1:]:
    try:
        out[name] = importlib.import_module(name).__version__
    except Exception as error:
        missing.append(name + ": " + type(error).__name__ + ": " + str(error).splitlines()[0][:200] if str(error) else name)
if "torch" in out:
    import torch
    device = "cuda" if torch.cuda.is_available() else ("mps" if getattr(torch.backends, "mps", None) and torch.backends.mps.is_available() else "cpu")
else:
    device = None
print(json.dumps({"versions": out, "missing": missing, "device": device}))
`

/**
 * The versions of Python and of the stack's modules in `python`. Without Python, or without a module the stack
 * needs, exit 6 (the machine lacks what measuring needs) with the install command.
 */
export async function probeStack(
  python: string,
  stack: CalibrateStack,
): Promise<{ versions: PythonVersions; device: string }> {
  const needs = NEEDS[stack]
  const result = await new Promise<{
    code: number | null
    stdout: string
    stderr: string
    error?: NodeJS.ErrnoException
  }>((resolve) => {
    const child = spawn(python, ['-c', PROBE, ...needs.map((n) => n.module)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      resolve({ code: null, stdout, stderr, error })
    })
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
  if (result.error) {
    throw new RigfitError(
      'hardware',
      'E_NO_PYTHON',
      `cannot run ${python}: ${result.error.code ?? result.error.message}; calibrating needs Python 3 with PyTorch`,
      {
        suggestion: `Install Python 3 and ${needs.map((n) => n.install).join(', ')}; or pass --python PATH.`,
      },
    )
  }
  let parsed: { versions: PythonVersions; missing: string[]; device: string | null } | null = null
  try {
    parsed = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '')
  } catch {
    parsed = null
  }
  if (result.code !== 0 || !parsed) {
    throw new RigfitError(
      'hardware',
      'E_PYTHON_PROBE',
      `${python} could not report its versions (exit ${result.code}): ${result.stderr.trim().split('\n').at(-1) ?? ''}`,
      {
        suggestion: 'Pass --python with a working Python 3.',
      },
    )
  }
  if (parsed.missing.length > 0) {
    const names = parsed.missing.map((line) => line.split(':')[0] as string)
    const install = needs.filter((n) => names.includes(n.module)).map((n) => n.install)
    throw new RigfitError(
      'hardware',
      names.includes('torch') ? 'E_NO_TORCH' : 'E_NO_STACK',
      `${python} cannot import ${parsed.missing.join('; ')}: the ${stack} stack cannot be measured here`,
      { suggestion: `${install.join('; ')}. Or pass --python with a Python that has them.` },
    )
  }
  return { versions: parsed.versions, device: parsed.device ?? 'cpu' }
}
