import { RigfitError } from '@rigfit/core'
import { FORMAT_NAMES, type FormatName, isFormatName } from './format-names.js'
import { accelerateFormat } from './formats/accelerate.js'
import { deepspeedFormat } from './formats/deepspeed.js'
import { hfFormat } from './formats/hf.js'
import { hydraFormat } from './formats/hydra.js'
import { kconfigFormat } from './formats/kconfig.js'
import { lightningFormat } from './formats/lightning.js'
import { pytorchFormat } from './formats/pytorch.js'
import { rigfitFormat } from './formats/rigfit.js'
import { slurmFormat } from './formats/slurm.js'
import { torchrunFormat } from './formats/torchrun.js'
import type { Exporter } from './types.js'

/** Every export format, by its `--format` name. */
export const FORMATS: Record<FormatName, Exporter> = {
  hf: hfFormat,
  accelerate: accelerateFormat,
  deepspeed: deepspeedFormat,
  torchrun: torchrunFormat,
  slurm: slurmFormat,
  lightning: lightningFormat,
  hydra: hydraFormat,
  kconfig: kconfigFormat,
  pytorch: pytorchFormat,
  rigfit: rigfitFormat,
}

export function getFormat(name: string): Exporter {
  if (!isFormatName(name)) {
    throw new RigfitError('usage', 'E_FORMAT_UNKNOWN', `unknown export format "${name}"`, {
      suggestion: `Use one of: ${FORMAT_NAMES.join(', ')}.`,
    })
  }
  return FORMATS[name]
}
