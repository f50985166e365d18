/** The formats `rigfit export --format` accepts; the names are a public contract. */
export const FORMAT_NAMES = [
  'hf',
  'accelerate',
  'deepspeed',
  'torchrun',
  'slurm',
  'lightning',
  'hydra',
  'kconfig',
  'pytorch',
  'rigfit',
] as const

export type FormatName = (typeof FORMAT_NAMES)[number]

export function isFormatName(value: string): value is FormatName {
  return (FORMAT_NAMES as readonly string[]).includes(value)
}
