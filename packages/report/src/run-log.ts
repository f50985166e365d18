import { MonitorRecord, RigfitError } from '@rigfit/core'

/**
 * The records of a `monitor.jsonl`, each checked against the public schema. A last line without its newline is a
 * record still being written by a running monitor and is left out; any other line that is not a record is an error
 * naming the file and the line.
 */
export function parseRunLog(text: string, source: string): MonitorRecord[] {
  const lines = text.split('\n')
  if (!text.endsWith('\n')) lines.pop()
  const records: MonitorRecord[] = []
  for (const [index, line] of lines.entries()) {
    if (line.trim() === '') continue
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      throw badLine(source, index + 1, 'is not JSON')
    }
    const parsed = MonitorRecord.safeParse(value)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]
      throw badLine(
        source,
        index + 1,
        `is not a monitor record (${issue?.path.join('.') || 'type'}: ${issue?.message})`,
      )
    }
    records.push(parsed.data)
  }
  return records
}

function badLine(source: string, line: number, what: string): RigfitError {
  return new RigfitError('validation', 'E_RUN_LOG_INVALID', `${source} line ${line} ${what}`, {
    suggestion: 'Pass the folder of a run written by `rigfit monitor` (its monitor.jsonl is read as it is).',
  })
}
