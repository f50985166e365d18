import { checkPlan, TrainingPlan } from '@rigfit/core'
import { jsonDocument, textFile } from '../render.js'
import type { Exporter, ExportFile } from '../types.js'
import { parseStructured, schemaProblems } from '../validate.js'

export const PLAN_FILE = 'rigfit-plan.json'

/** The plan itself, as `rigfit export --plan` and the example trainer read it back. */
export function planFile(plan: TrainingPlan): ExportFile {
  return textFile(PLAN_FILE, jsonDocument(plan))
}

/** Checks a bundled plan file: it parses as a TrainingPlan, contradicts nothing, and is the plan exported. */
export function validatePlanFile(files: ExportFile[], plan: TrainingPlan): string[] {
  const file = files.find((f) => f.path === PLAN_FILE)
  if (!file) return [`${PLAN_FILE}: missing from the export`]
  const { value, problems } = parseStructured(file, 'json')
  if (problems.length > 0) return problems
  const schema = schemaProblems(file, TrainingPlan, value)
  if (schema.length > 0) return schema
  const issues = checkPlan(value as TrainingPlan).map((i) => `${PLAN_FILE}: ${i.field} ${i.message}`)
  if (JSON.stringify(value) !== JSON.stringify(plan))
    issues.push(`${PLAN_FILE}: differs from the plan being exported`)
  return issues
}

export const rigfitFormat: Exporter = {
  name: 'rigfit',
  description: "rigfit's own plan JSON, read back by `rigfit export --plan` and examples/pytorch/train.py",
  unsupportedReason: () => null,
  render: (plan) => [planFile(plan)],
  validate: validatePlanFile,
}
