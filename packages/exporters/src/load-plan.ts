import {
  assertPlanConsistent,
  describeJsonError,
  HardwareProfile,
  type IoFacts,
  ioFactsFromProfile,
  RigfitError,
  TrainingPlan,
} from '@rigfit/core'
import { DEFAULT_INPUT_TIMEOUT_MS, MAX_INPUT_DOCUMENT_BYTES, readInputText } from '@rigfit/core/node'
import type { z } from 'zod'

export interface Document<T> {
  schema: z.ZodType<T>
  /** What the file holds, for messages: "TrainingPlan". */
  name: string
  code: string
  suggestion: string
}

const PLAN: Document<TrainingPlan> = {
  schema: TrainingPlan,
  name: 'TrainingPlan',
  code: 'PLAN',
  suggestion: 'Pass a plan written by `rigfit plan --json` or `rigfit export --format rigfit`.',
}
const PROFILE: Document<HardwareProfile> = {
  schema: HardwareProfile,
  name: 'HardwareProfile',
  code: 'PROFILE',
  suggestion: 'Write a profile with `rigfit profile --out profile.json`.',
}

/** Parses JSON text against a schema; errors name the source and every failing field. */
function parseDocument<T>(text: string, source: string, doc: Document<T>): T {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    throw new RigfitError(
      'input',
      `E_${doc.code}_JSON`,
      `${source} is not valid JSON: ${describeJsonError(error)}`,
      {
        suggestion: doc.suggestion,
      },
    )
  }
  const parsed = doc.schema.safeParse(raw)
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    throw new RigfitError(
      'validation',
      `E_${doc.code}_INVALID`,
      `${source} is not a valid ${doc.name}: ${fields.join('; ')}`,
      {
        suggestion: doc.suggestion,
        details: parsed.error.issues,
      },
    )
  }
  return parsed.data
}

/** Reads a document file; a FIFO or pipe must deliver it within `timeoutMs`. */
export async function readDocument<T>(
  path: string,
  doc: Document<T>,
  timeoutMs = DEFAULT_INPUT_TIMEOUT_MS,
): Promise<T> {
  const read = await readInputText(path, MAX_INPUT_DOCUMENT_BYTES, timeoutMs)
  if (!read.ok) {
    throw new RigfitError(
      // A pipe that never delivered is an I/O failure; a wrong or missing file is the user's input.
      read.timedOut === true ? 'io' : 'input',
      `E_${doc.code}_READ`,
      `cannot read ${doc.name} file ${path}: ${read.message}`,
      {
        suggestion: doc.suggestion,
      },
    )
  }
  return parseDocument(read.text, path, doc)
}

/** Parses and validates a TrainingPlan from JSON text; `source` names the file in errors. */
export function parsePlan(text: string, source: string): TrainingPlan {
  const plan = parseDocument(text, source, PLAN)
  assertPlanConsistent(plan, source)
  return plan
}

/** Reads, parses and validates a plan file (a FIFO or pipe within `timeoutMs`). */
export async function readPlanFile(
  path: string,
  timeoutMs = DEFAULT_INPUT_TIMEOUT_MS,
): Promise<TrainingPlan> {
  const plan = await readDocument(path, PLAN, timeoutMs)
  assertPlanConsistent(plan, path)
  return plan
}

/** Reads a HardwareProfile file for its measured storage, network and memory. */
export async function readProfileIoFacts(path: string): Promise<IoFacts> {
  return ioFactsFromProfile(await readDocument(path, PROFILE))
}
