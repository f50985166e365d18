import { parse } from 'yaml'
import type { z } from 'zod'
import type { ExportFile } from './types.js'

/** Runs a target schema over parsed content and names each problem by file and key path. */
export function schemaProblems(file: ExportFile, schema: z.ZodType, value: unknown): string[] {
  const result = schema.safeParse(value)
  if (result.success) return []
  return result.error.issues.map((i) => `${file.path}: ${i.path.join('.') || '(root)'}: ${i.message}`)
}

/** Parses a JSON or YAML file for validation; a parse failure is itself a problem. */
export function parseStructured(
  file: ExportFile,
  kind: 'json' | 'yaml',
): { value: unknown; problems: string[] } {
  try {
    return { value: kind === 'json' ? JSON.parse(file.content) : parseYaml11(file.content), problems: [] }
  } catch (error) {
    return { value: undefined, problems: [`${file.path}: not valid ${kind}: ${(error as Error).message}`] }
  }
}

/** Parses the named file and validates it with a schema; the value is for further checks when there are no problems. */
export function readStructured(
  files: ExportFile[],
  path: string,
  kind: 'json' | 'yaml',
  schema: z.ZodType,
): { value: unknown; problems: string[] } {
  const file = files.find((f) => f.path === path)
  if (!file) return { value: undefined, problems: [`${path}: missing from the export`] }
  const { value, problems } = parseStructured(file, kind)
  return { value, problems: problems.length > 0 ? problems : schemaProblems(file, schema, value) }
}

/** Validates the named file with a schema, or reports it missing. */
export function validateStructured(
  files: ExportFile[],
  path: string,
  kind: 'json' | 'yaml',
  schema: z.ZodType,
): string[] {
  return readStructured(files, path, kind, schema).problems
}

/** Reasons launchers give for plans that place models per GPU inside one process. */
export function modelSplitReason(plan: { settings: { strategy: string } }, format: string): string | null {
  return plan.settings.strategy === 'model-split'
    ? `the plan places models per GPU inside one process, which ${format} does not launch; run it with python directly (formats hf, pytorch, hydra, kconfig and rigfit apply)`
    : null
}

/** Reads YAML the way the Python tools do (PyYAML implements YAML 1.1). */
export function parseYaml11(text: string): unknown {
  return parse(text, { version: '1.1' })
}
