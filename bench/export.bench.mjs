// Time to export every format for a plan (run after `pnpm build`).
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { exportPlan, FORMAT_NAMES, FORMATS, parsePlan } from '../packages/exporters/dist/index.js'

const fixtures = ['rtx4090-bf16', 'h100x8-fsdp-2nodes']
const rounds = 200
const figures = {}
for (const name of fixtures) {
  const path = new URL(`../packages/exporters/test/fixtures/plans/${name}.json`, import.meta.url)
  const plan = parsePlan(readFileSync(path, 'utf8'), name)
  const formats = FORMAT_NAMES.filter((f) => FORMATS[f].unsupportedReason(plan) === null)
  for (const format of formats) exportPlan(plan, { format }) // warm-up
  const start = performance.now()
  for (let i = 0; i < rounds; i += 1) for (const format of formats) exportPlan(plan, { format })
  const perAll = (performance.now() - start) / rounds
  const metaStart = performance.now()
  for (let i = 0; i < rounds; i += 1) exportPlan(plan, { format: 'deepspeed', meta: true })
  const meta = (performance.now() - metaStart) / rounds
  console.log(
    `${name}: all ${formats.length} formats in ${perAll.toFixed(2)} ms (${(perAll / formats.length).toFixed(3)} ms each); --meta deepspeed ${meta.toFixed(2)} ms`,
  )
  figures[`${name}_all_formats_ms`] = Number(perAll.toFixed(3))
  figures[`${name}_meta_ms`] = Number(meta.toFixed(3))
}
console.log(JSON.stringify({ bench: 'export', ...figures }))
