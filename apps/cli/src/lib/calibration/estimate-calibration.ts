import type { Command } from '@oclif/core'
import { correctSpeed, type EstimateInput, type EstimateResult, machineDevice } from '@rigfit/core'
import type { EstimateContext } from '../estimate-context.js'
import { loadCalibration } from './calibration-flags.js'

/**
 * An estimate's speed, corrected from this machine's calibration store (core's correction; the CLI reads the
 * file). Only an estimate for a machine's own profile can match: the records are keyed by its device
 * fingerprint. An estimate without speed, or with the store turned off, is returned as it is.
 */
export async function calibrateEstimate(
  command: Command,
  use: boolean,
  context: EstimateContext | null,
  input: EstimateInput,
  result: EstimateResult,
): Promise<EstimateResult> {
  const throughput = result.throughput
  if (!use || context === null || throughput === null) return result
  const { records } = await loadCalibration(command)
  const device = machineDevice(context.profile, context.device.kind === 'cpu' ? null : context.gpus)
  const { tokensPerSecond, calibration } = correctSpeed(
    records,
    {
      fingerprint: device.fingerprint,
      stack: null,
      settings: {
        modelFamily: input.model.modelType,
        params: result.params.total,
        seq: input.seq,
        microBatch: input.microBatch,
        gradAccum: input.gradAccum,
        precision: input.precision,
        method: input.lora ? (input.quant === 'none' ? 'lora' : 'qlora') : 'full',
        gradCheckpointing: input.gradCheckpointing,
        threads: null,
        gpus: context.device.kind === 'cpu' ? 0 : input.gpus,
        nodes: input.nodes,
      },
    },
    throughput.tokensPerSecond,
  )
  const factor = calibration.factor
  return {
    ...result,
    throughput: {
      tokensPerSecond,
      tokensPerSecondPerDevice: throughput.tokensPerSecondPerDevice * factor,
      stepSeconds: throughput.stepSeconds / factor,
      mfu: throughput.mfu * factor,
    },
    calibration,
  }
}
