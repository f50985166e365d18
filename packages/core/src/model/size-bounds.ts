import { RigfitError } from '../errors.js'

/**
 * Sanity bounds on derived sizes. Each field of a config may be plausible while their product is not: rigfit
 * refuses a model above 10^14 parameters (fifty times the largest trained so far) and a memory figure above 2^50
 * bytes (a pebibyte), where its arithmetic would stop being exact and its answers mean nothing.
 */
export const MAX_MODEL_PARAMETERS = 1e14
export const MAX_MEMORY_BYTES = 2 ** 50

function scientific(value: number): string {
  return Number.isFinite(value) ? value.toExponential(2).replace('e+', ' × 10^') : String(value)
}

export function assertSaneParameterCount(parameters: number, source: string): void {
  if (parameters <= MAX_MODEL_PARAMETERS) return
  throw new RigfitError(
    'input',
    'E_MODEL_TOO_LARGE',
    `${source}: its sizes make ${scientific(parameters)} parameters, above the ${scientific(MAX_MODEL_PARAMETERS)} rigfit models`,
    {
      suggestion:
        'Check hidden_size, intermediate_size, num_hidden_layers and vocab_size against the model card: one of them is likely off by a few zeros.',
    },
  )
}

export function assertSaneMemory(bytes: number, what: string): void {
  if (bytes <= MAX_MEMORY_BYTES) return
  throw new RigfitError(
    'input',
    'E_MEMORY_TOO_LARGE',
    `${what} needs ${scientific(bytes)} bytes, above the 2^50 bytes (1 PiB) rigfit estimates`,
    {
      suggestion: 'Check the model size, --seq and --micro-batch: no device holds this much.',
    },
  )
}
