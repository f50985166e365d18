import { ExportManifest, RigfitError, type TrainingPlan } from '@rigfit/core'
import { describe, expect, it } from 'vitest'
import { manifestEntry, manifestFile, reexport, sha256 } from '../src/export-manifest.js'
import { type ExportOptions, exportPlan } from '../src/export-plan.js'
import { FORMAT_NAMES } from '../src/format-names.js'
import { FIXTURE_NAMES, loadFixturePlan } from './helpers/fixture-plans.js'
import { readBack } from './helpers/read-back.js'

/** One rung of the monitor's OOM ladder: half the micro-batch, twice the accumulation, the same effective batch. */
function halved(plan: TrainingPlan): TrainingPlan {
  const { microBatch, gradAccum } = plan.settings
  return { ...plan, settings: { ...plan.settings, microBatch: microBatch / 2, gradAccum: gradAccum * 2 } }
}

const parseManifest = (text: string) => ExportManifest.parse(JSON.parse(text))

const cases = FIXTURE_NAMES.flatMap((name) =>
  FORMAT_NAMES.flatMap((format) => [null, 2].map((nodes) => [name, format, nodes] as const)),
)

describe('the export manifest makes the same export again from a relaunch plan', () => {
  it.each(cases)('%s as %s, nodes %s', (name, format, nodes) => {
    const plan = loadFixturePlan(name)
    const options: ExportOptions = { format, nodes, datasetBytes: 5e9, hosts: [], portable: false }
    let first: ReturnType<typeof exportPlan>
    try {
      first = exportPlan(plan, options)
    } catch (error) {
      // Plans a format or a node count cannot express are refused with a typed error, and have no manifest.
      expect(error).toBeInstanceOf(RigfitError)
      return
    }
    const manifest = parseManifest(manifestFile(null, manifestEntry(plan, options, first)).content)
    const entry = manifest.exports[0]
    expect(entry?.files.map((f) => f.path)).toEqual(first.files.map((f) => f.path))
    expect(entry?.files.map((f) => f.sha256)).toEqual(first.files.map((f) => sha256(f.content)))

    // The same plan gives the same files back, whatever the options.
    expect(reexport(manifest, plan).map((f) => f.content)).toEqual(first.files.map((f) => f.content))
    // A relaunch plan from the monitor is re-estimated for its settings; halving here keeps the figures, which a
    // node-scaled export would re-estimate from, so the relaunch is checked on one node.
    if (nodes !== null || plan.settings.microBatch % 2 !== 0) return
    const relaunch = halved(plan)
    const again = reexport(manifest, relaunch)
    // Exactly what `rigfit export` with the same options writes for the relaunch plan.
    const direct = exportPlan(relaunch, options)
    expect(again.map((f) => [f.path, f.content])).toEqual(direct.files.map((f) => [f.path, f.content]))
    const before = readBack(format, first.files)
    const after = readBack(format, again)
    if (before.microBatch !== null) {
      expect(after.microBatch).toBe((before.microBatch as number) / 2)
      expect(after.gradAccum).toBe((before.gradAccum as number) * 2)
    }
  })

  it('keeps the other formats of a folder and replaces the same format', () => {
    // A relaunch halves the micro-batch: take a single-node CUDA plan whose micro-batch halves evenly.
    const plan = FIXTURE_NAMES.map((name) => loadFixturePlan(name)).find(
      (p) => p.settings.device === 'cuda' && p.settings.nodes === 1 && p.settings.microBatch % 2 === 0,
    ) as TrainingPlan
    expect(plan).toBeDefined()
    const entryOf = (format: string, p: TrainingPlan) =>
      manifestEntry(p, { format }, exportPlan(p, { format }))
    const hf = parseManifest(manifestFile(null, entryOf('hf', plan)).content)
    const both = parseManifest(manifestFile(hf, entryOf('deepspeed', plan)).content)
    expect(both.exports.map((e) => e.format)).toEqual(['hf', 'deepspeed'])
    const replaced = parseManifest(manifestFile(both, entryOf('hf', halved(plan))).content)
    expect(replaced.exports.map((e) => e.format)).toEqual(['deepspeed', 'hf'])
    expect(replaced.exports[1]?.plan.settings.microBatch).toBe(plan.settings.microBatch / 2)
    // Both formats come back, each from the relaunch plan; a file two formats share is written once.
    const paths = reexport(both, halved(plan)).map((f) => f.path)
    expect(paths).toContain('training_args.json')
    expect(paths).toContain('ds_config.json')
    expect(new Set(paths).size).toBe(paths.length)
  })
})
