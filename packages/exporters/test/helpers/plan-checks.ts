import {
  estimate,
  type HardwareProfile,
  planStackMechanisms,
  planTrainingPoint,
  pointEstimateInput,
  SETTING_NAMES,
  SETTING_PLAN_PATHS,
  selectTrainingDevices,
  type TrainingPlan,
  traceFor,
} from '@rigfit/core'
import { exportPlan } from '../../src/export-plan.js'
import { FORMAT_NAMES } from '../../src/format-names.js'
import { FORMATS } from '../../src/registry.js'
import { exportMismatches } from './export-fidelity.js'
import { readBack } from './read-back.js'
import { behaviourMismatches } from './what-runs.js'

const message = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * The only refusals a plan may meet, where the format's tool cannot run the plan's device at all (docs/export.md,
 * "Formats a device cannot use"): DeepSpeed's mps accelerator has no communication backend and its CPU
 * accelerator needs Intel's extension and oneCCL, and the DeepSpeed export is written for CUDA and ROCm only (not
 * xpu); Slurm does not run on macOS. Every other refusal is a failure.
 */
export const DEVICE_REFUSALS: Readonly<Record<string, readonly string[]>> = {
  deepspeed: ['mps', 'cpu', 'xpu'],
  slurm: ['mps'],
}

/**
 * Every format exports the plan, unrefused; its files read back to the plan's settings, and what the tools would
 * run with them (tool-behaviour.ts: launcher environments, trained dtype, sharding, wrapping) is the plan.
 * `nodeCpus` is the CPUs of one node of the machine, where known.
 */
export function exportProblems(plan: TrainingPlan, nodeCpus: number | null = null): string[] {
  const problems: string[] = []
  for (const format of FORMAT_NAMES) {
    const refused = FORMATS[format].unsupportedReason(plan)
    if (refused !== null) {
      if (DEVICE_REFUSALS[format]?.includes(plan.settings.device)) continue
      problems.push(`${format}: refused: ${refused}`)
      continue
    }
    try {
      const result = exportPlan(plan, { format })
      for (const problem of exportMismatches(result.plan, format, readBack(format, result.files)))
        problems.push(`${format}: ${problem}`)
      for (const problem of behaviourMismatches(result.plan, format, result.files, nodeCpus))
        problems.push(`${format} runs: ${problem}`)
    } catch (error) {
      problems.push(`${format}: ${message(error)}`)
    }
  }
  return problems
}

/** A settings key as `rigfit explain` names it: the packs' name where one exists (`dataloaderWorkers`), else the path. */
const traceNameOf = (path: string) => SETTING_NAMES.find((name) => SETTING_PLAN_PATHS[name] === path) ?? path

/** Every setting of the plan by its path; `compile` and `dataloader` are objects of settings. */
function settingsByPath(plan: TrainingPlan): [string, unknown][] {
  return Object.entries(plan.settings).flatMap(([key, value]) =>
    key === 'compile' || key === 'dataloader'
      ? Object.entries(value as object).map(([sub, inner]): [string, unknown] => [`${key}.${sub}`, inner])
      : [[key, value] as [string, unknown]],
  )
}

/** `rigfit explain <setting>` shows the trace's entries for the setting; its last word must be the setting. */
export function traceProblems(plan: TrainingPlan): string[] {
  const problems: string[] = []
  for (const [path, value] of settingsByPath(plan)) {
    const last = traceFor(plan.trace, traceNameOf(path)).at(-1)
    if (!last) problems.push(`explain ${path}: no trace entry`)
    else if (JSON.stringify(last.value) !== JSON.stringify(value))
      problems.push(
        `explain ${path}: trace says ${JSON.stringify(last.value)}, plan ${JSON.stringify(value)}`,
      )
  }
  return problems
}

/** `estimate()` at the plan's own settings gives the plan's memory per device and tokens/s. */
export function estimateProblems(plan: TrainingPlan, profile: HardwareProfile): string[] {
  const devices = selectTrainingDevices(profile)
  const again = estimate(
    pointEstimateInput(
      planTrainingPoint(plan),
      devices.estimateDevice,
      profile.interconnect.kind,
      planStackMechanisms(plan),
    ),
  )
  const problems: string[] = []
  if (JSON.stringify(again.perDevice) !== JSON.stringify(plan.memory.perDevice))
    problems.push(`estimate memory ${again.perDevice.total} vs plan ${plan.memory.perDevice.total}`)
  if (again.throughput?.tokensPerSecond !== plan.throughput.tokensPerSecond)
    problems.push(
      `estimate ${again.throughput?.tokensPerSecond} tokens/s vs plan ${plan.throughput.tokensPerSecond}`,
    )
  return problems
}

/** Everything wrong with one plan: exports, explain, estimate. Empty when the plan is one truth. */
export function planProblems(plan: TrainingPlan, profile: HardwareProfile): string[] {
  return [
    ...exportProblems(plan, profile.cpu.usableCores),
    ...traceProblems(plan),
    ...estimateProblems(plan, profile),
  ]
}
