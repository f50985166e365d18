import type { z } from 'zod'
import { valueAt } from './safe-json.js'

export interface IssueReport {
  path: PropertyKey[]
  message: string
}

type Issue = z.core.$ZodIssue

/**
 * Turns zod issues into messages a pack author can act on: the JSON path of the offending value, the value, and
 * for a misspelt fact, operator or setting the nearest known name. For a value that matches none of a union's
 * shapes (a condition or a group of conditions) it follows the shape the value was evidently meant to be.
 */
export function describeIssues(error: z.ZodError, input: unknown): IssueReport[] {
  const reports: IssueReport[] = []
  for (const issue of error.issues) collect(issue, [], input, reports)
  return reports
}

function collect(issue: Issue, base: PropertyKey[], input: unknown, out: IssueReport[]): void {
  const path = [...base, ...issue.path]
  const value = valueAt(input, path)
  switch (issue.code) {
    case 'invalid_union': {
      if (issue.errors.length === 0) {
        out.push({ path, message: discriminatorMessage(issue, value) })
        return
      }
      const branch = intendedBranch(issue.errors)
      if (branch) {
        for (const inner of branch) collect(inner, path, input, out)
      } else {
        out.push({ path, message: `${preview(value)} has none of the allowed shapes` })
      }
      return
    }
    case 'invalid_value': {
      out.push({ path, message: unknownValueMessage(path, value, issue.values as unknown[]) })
      return
    }
    case 'unrecognized_keys': {
      for (const key of issue.keys) out.push({ path: [...path, key], message: `unknown key "${key}"` })
      return
    }
    case 'invalid_type': {
      const received = value === undefined ? 'nothing (the key is missing)' : preview(value)
      out.push({ path, message: `expected ${issue.expected}, got ${received}` })
      return
    }
    default:
      out.push({ path, message: issue.message })
  }
}

/** The union branch the value was meant for: one whose problems are all inside the value, not about its shape. */
function intendedBranch(branches: Issue[][]): Issue[] | null {
  const aboutInside = branches.filter((issues) =>
    issues.every(
      (issue) => issue.path.length > 0 || issue.code === 'custom' || issue.code === 'invalid_union',
    ),
  )
  if (aboutInside.length === 0) return null
  return aboutInside.reduce((best, next) => (next.length < best.length ? next : best))
}

const NAMED = new Set(['fact', 'operator', 'setting', 'type'])

function unknownValueMessage(path: PropertyKey[], value: unknown, allowed: unknown[]): string {
  const last = path[path.length - 1]
  const named = typeof last === 'string' && NAMED.has(last)
  const what = named ? `unknown ${last === 'type' ? 'event type' : last}` : 'unknown value'
  const nearest = nearestName(value, allowed)
  if (nearest) return `${what} ${preview(value)} (did you mean "${nearest}"?)`
  return `${what} ${preview(value)}; allowed: ${listOf(allowed)}`
}

function discriminatorMessage(issue: Issue & { code: 'invalid_union' }, value: unknown): string {
  const options = (issue as { options?: unknown[] }).options ?? []
  const nearest = nearestName(value, options)
  const hint = nearest ? ` (did you mean "${nearest}"?)` : ''
  return `unknown event type ${preview(value)}${hint}; event types are ${listOf(options)}`
}

function nearestName(value: unknown, allowed: unknown[]): string | null {
  if (typeof value !== 'string') return null
  return closest(
    value,
    allowed.filter((v): v is string => typeof v === 'string'),
  )
}

function listOf(values: unknown[]): string {
  const shown = values.slice(0, 12).map((v) => JSON.stringify(v))
  return values.length > 12 ? `${shown.join(', ')}, … (${values.length} in all)` : shown.join(', ')
}

function preview(value: unknown): string {
  if (value === undefined) return 'nothing'
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/** The known name nearest to a misspelling, when it is near enough to be the one meant. */
export function closest(word: string, known: string[]): string | null {
  let best: string | null = null
  let bestDistance = Number.POSITIVE_INFINITY
  const lower = word.toLowerCase()
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best !== null && bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? best : null
}

function editDistance(a: string, b: string): number {
  if (a.length > 100 || b.length > 100) return Math.abs(a.length - b.length) + 100
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost)
    }
    previous = current
  }
  return previous[b.length] ?? 0
}
