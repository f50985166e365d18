import { isRecord } from '../parsers/values.js'

/** Field readers for systeminformation results, which arrive as untyped data from a worker. */
export function siRecord(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {}
}

export function siArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : []
}

export function siString(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null
}

export function siNumber(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null
}
