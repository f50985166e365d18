import type { SettingExplanation, StackMechanismExplanation, TraceEntry } from '@rigfit/core'

/** A setting as the packs decided it and as the plan has it: `value` is the plan's, `trace` how it got there. */
export type ExplainedSetting = SettingExplanation & { docs: string | null; trace: TraceEntry[] }

/** A plan's trace entries under a title: each value with the rule or search step that decided it. */
export function renderTrace(title: string, trace: TraceEntry[]): string {
  const lines = [`${title}\n`]
  for (const entry of trace) {
    lines.push(`${entry.setting} = ${JSON.stringify(entry.value)}`)
    lines.push(...traceLines(entry))
    lines.push('')
  }
  return lines.join('\n')
}

function traceLines(entry: TraceEntry): string[] {
  const lines = [
    `  decided by  ${entry.pack}/${entry.rule} (${entry.layer})`,
    `  because     ${entry.reason}`,
  ]
  const { alternatives, ...facts } = entry.facts
  if (Object.keys(facts).length > 0) lines.push(`  facts read  ${formatFacts(facts)}`)
  lines.push(...comparedLines(alternatives))
  return lines
}

/** The setups the search weighed, one a line with its predicted speed and time; the chosen one marked. */
function comparedLines(alternatives: unknown): string[] {
  if (!Array.isArray(alternatives)) return []
  return alternatives.map((a: Record<string, unknown>, i) => {
    const hours = typeof a.hours === 'number' ? `, ${a.hours} h` : ''
    const gib = typeof a.memoryBytes === 'number' ? `, ${(a.memoryBytes / 2 ** 30).toFixed(1)} GiB` : ''
    return `  ${i === 0 ? 'compared' : '        '}    ${String(a.setup)}: ${String(a.tokensPerSecond)} tokens/s${hours}${gib}${a.chosen ? '  <- chosen' : ''}`
  })
}

function formatFacts(facts: Record<string, unknown>): string {
  return Object.entries(facts)
    .map(([name, value]) => `${name} = ${JSON.stringify(value)}`)
    .join(', ')
}

/**
 * The plan's value first, with what decided it: the rule (with the rules it overrode) when the plan kept the
 * rule's value, else the search step, then the rule whose preference the plan departed from.
 */
export function renderExplanation(item: ExplainedSetting): string {
  const lines: string[] = []
  const { decision, cap } = item
  const last = item.trace[item.trace.length - 1]
  const ruleDecided =
    decision !== null &&
    (last === undefined ||
      (last.layer !== 'generator' &&
        last.rule === decision.provenance.rule &&
        last.pack === decision.provenance.pack))
  if (decision || last) lines.push(`${item.setting} = ${JSON.stringify(item.value)}`)
  if (decision && ruleDecided) {
    const p = decision.provenance
    lines.push(
      `  decided by  ${p.pack}/${p.rule} (${p.layer} layer, priority ${p.priority})${decision.source === 'forbid' ? ', the other value being forbidden' : ''}`,
    )
    lines.push(`  because     ${p.reason}`)
    if (Object.keys(p.facts).length > 0) lines.push(`  facts read  ${formatFacts(p.facts)}`)
    // The rule's preference held: the setups the search weighed against it, with their predicted speed.
    lines.push(...comparedLines(last?.facts.alternatives))
  } else if (last) {
    lines.push(...traceLines(last))
    if (decision) {
      const p = decision.provenance
      lines.push(
        `  rule said   ${JSON.stringify(decision.value)}: ${p.pack}/${p.rule} (${p.layer} layer, priority ${p.priority}): ${p.reason}`,
      )
    }
  } else {
    lines.push(`${item.setting}: no rule decides it here; the planner chooses`)
  }
  for (const other of decision?.overridden ?? []) {
    const why = other.why === 'forbidden' ? `forbidden by ${other.forbiddenBy}` : 'lower precedence'
    lines.push(
      `  overrode    ${other.provenance.pack}/${other.provenance.rule} (priority ${other.provenance.priority}): ${JSON.stringify(other.value)}, ${why}`,
    )
  }
  if (cap) {
    const lowered =
      decision?.cappedFrom !== null && decision?.cappedFrom !== undefined
        ? ` (lowered from ${decision.cappedFrom})`
        : ''
    lines.push(
      `  capped at   ${cap.max} by ${cap.provenance.pack}/${cap.provenance.rule}${lowered}: ${cap.provenance.reason}`,
    )
  }
  for (const forbid of item.forbids) {
    lines.push(
      `  forbidden   ${JSON.stringify(forbid.value)} by ${forbid.provenance.pack}/${forbid.provenance.rule}: ${forbid.provenance.reason}`,
    )
  }
  if (item.docs) lines.push(`  docs        ${item.docs}`)
  return `${lines.join('\n')}\n`
}

/** The stack's mechanisms, each with the stack release and the source that decides it. */
export function renderStack(rows: readonly StackMechanismExplanation[]): string {
  const lines = [`stack ${rows[0]?.stack ?? ''}: what the estimate assumes beyond the settings`]
  for (const row of rows) {
    lines.push(
      `  ${row.mechanism} = ${JSON.stringify(row.value)}  (${row.stack}: ${row.says})`,
      `      ${row.source}`,
    )
  }
  return `${lines.join('\n')}\n`
}
