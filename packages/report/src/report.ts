import { type EstimateReport, estimateSection } from './estimate-section.js'
import { type MachineSummary, machineSection } from './machine-section.js'
import { renderPage } from './page.js'
import { type LabelledPlan, plansSection } from './plans-section.js'
import { type RunReport, runSection } from './run-section.js'
import { type WhatIf, whatIfSection } from './what-if-section.js'

/** What one page shows: any of the machine, plans, a what-if, an estimate and a run, in that order. */
export interface ReportInput {
  /** When the page was made (ISO time), from the caller: rendering reads no clock. */
  createdAt: string
  rigfitVersion: string
  machine?: MachineSummary | null
  plans?: LabelledPlan[]
  whatIf?: WhatIf | null
  estimate?: EstimateReport | null
  /** A run, or every node's run of a multi-node job. */
  run?: RunReport | RunReport[] | null
}

export type ReportKind = 'plans' | 'estimate' | 'run'

export function reportKinds(input: ReportInput): ReportKind[] {
  const kinds: ReportKind[] = []
  if ((input.plans?.length ?? 0) > 0 || input.whatIf) kinds.push('plans')
  if (input.estimate) kinds.push('estimate')
  if (input.run && (!Array.isArray(input.run) || input.run.length > 0)) kinds.push('run')
  return kinds
}

const TITLES: Record<ReportKind, string> = {
  plans: 'training plans',
  estimate: 'memory estimate',
  run: 'training run',
}

/** The whole page as one HTML string: inline styles and SVG, no script, nothing fetched. */
export async function renderReport(input: ReportInput): Promise<string> {
  const kinds = reportKinds(input)
  if (kinds.length === 0 && !input.machine) throw new Error('renderReport: nothing to report')
  const sections: string[] = []
  if (input.machine) sections.push(machineSection(input.machine))
  if (input.plans && input.plans.length > 0) sections.push(await plansSection(input.plans))
  if (input.whatIf) sections.push(await whatIfSection(input.whatIf))
  if (input.estimate) sections.push(await estimateSection(input.estimate))
  const runs = input.run ? (Array.isArray(input.run) ? input.run : [input.run]) : []
  for (const run of runs) sections.push(await runSection(run))
  return renderPage({
    title: `rigfit report: ${kinds.map((kind) => TITLES[kind]).join(', ') || 'machine'}`,
    subtitle: `Made by rigfit ${input.rigfitVersion} on ${input.createdAt}. Every number comes from the same objects that \`rigfit … --json\` prints.`,
    kinds,
    sections,
  })
}
