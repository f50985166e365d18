import type { Advice, TraceEntry } from '@rigfit/core'

/** The source named in warnings and trace entries the exporters add to plans and exports. */
export const EXPORTERS_SOURCE = '@rigfit/exporters'

export function exporterAdvice(id: string, message: string): Advice {
  return { id, message, source: EXPORTERS_SOURCE, expectedGain: null }
}

export function exporterTrace(
  setting: string,
  value: unknown,
  rule: string,
  reason: string,
  facts: Record<string, unknown>,
): TraceEntry {
  return { setting, value, rule, pack: EXPORTERS_SOURCE, layer: 'generator', facts, reason }
}
