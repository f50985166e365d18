import type { Advice, TraceEntry } from '../../schemas/training-plan.js'

/**
 * The source named in warnings and trace entries that revising a plan adds (other nodes, meta phases, streaming):
 * the name plans and exports have carried since the exporters did it, kept so they read the same.
 */
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
