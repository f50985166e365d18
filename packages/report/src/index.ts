/**
 * @rigfit/report: plans, an estimate or a monitored run as one self-contained HTML page whose plots are inline
 * SVG rendered in Node by Vega-Lite and vega's headless view.
 */
export { type Chart, chartSvg, renderChart } from './chart.js'
export { EstimateReport, SweepPoint } from './estimate-section.js'
export { MachineSummary } from './machine-section.js'
export { MEMORY_PARTS, type MemoryPart, partBytes } from './memory-parts.js'
export type { LabelledPlan } from './plans-section.js'
export { type ReportInput, type ReportKind, renderReport, reportKinds } from './report.js'
export { parseRunLog } from './run-log.js'
export type { RunReport } from './run-section.js'
export { type RunEvent, type RunFigures, runFigures, type SeriesPoint } from './run-series.js'
export { explainId } from './settings-table.js'
export { WhatIf, WhatIfCandidate } from './what-if-section.js'
