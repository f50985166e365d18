import { createHash } from 'node:crypto'
import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { ExportManifest, NO_IO_FACTS, RIGFIT_VERSION, RigfitError, type TrainingPlan } from '@rigfit/core'
import { type ExportOptions, type ExportResult, exportPlan } from './export-plan.js'
import { type Document, readDocument } from './load-plan.js'
import { jsonDocument, textFile } from './render.js'
import type { ExportFile } from './types.js'

/** The manifest `rigfit export --out DIR` writes beside the files. */
export const EXPORT_MANIFEST_FILE = 'rigfit-export.json'

type ManifestEntry = ExportManifest['exports'][number]

const MANIFEST: Document<ExportManifest> = {
  schema: ExportManifest,
  name: 'export manifest',
  code: 'EXPORT_MANIFEST',
  suggestion: 'Export again with `rigfit export --plan plan.json --format F --out DIR --force`.',
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** How one export was made: the plan as given, the options, and a hash of each file it wrote. */
export function manifestEntry(
  plan: TrainingPlan,
  options: ExportOptions,
  result: ExportResult,
): ManifestEntry {
  return {
    format: result.format,
    plan,
    options: {
      nodes: options.nodes ?? null,
      meta: options.meta ?? false,
      datasetBytes: options.datasetBytes ?? null,
      hosts: options.hosts ?? [],
      portable: options.portable ?? false,
      io: options.io ?? null,
    },
    files: result.files.map((file) => ({ path: file.path, sha256: sha256(file.content) })),
  }
}

/** The manifest file for a folder: its earlier exports of other formats kept, this format's replaced. */
export function manifestFile(existing: ExportManifest | null, entry: ManifestEntry): ExportFile {
  const others = existing?.exports.filter((e) => e.format !== entry.format) ?? []
  const manifest: ExportManifest = {
    schemaVersion: 1,
    rigfitVersion: RIGFIT_VERSION,
    exports: [...others, entry],
  }
  return textFile(EXPORT_MANIFEST_FILE, jsonDocument(manifest))
}

/** The folder's manifest, or null when the folder has none. A manifest that is there must be valid. */
export async function readExportManifest(dir: string): Promise<ExportManifest | null> {
  const path = join(dir, EXPORT_MANIFEST_FILE)
  try {
    await access(path)
  } catch {
    return null
  }
  return readDocument(path, MANIFEST)
}

/** Like readExportManifest, for a folder that must hold one. */
export async function requireExportManifest(dir: string): Promise<ExportManifest> {
  const manifest = await readExportManifest(dir)
  if (manifest !== null) return manifest
  throw new RigfitError(
    'input',
    'E_EXPORT_MANIFEST_MISSING',
    `${dir} has no ${EXPORT_MANIFEST_FILE}: it is not a folder written by \`rigfit export --out\``,
    {
      suggestion: `Export the plan into a folder first: rigfit export --plan plan.json --format hf --out ${dir}`,
    },
  )
}

/**
 * Makes every export of a manifest again from another plan (a relaunch's plan copy), with the options each was
 * made with. Pure: returns the files; the caller writes them.
 */
export function reexport(manifest: ExportManifest, plan: TrainingPlan): ExportFile[] {
  const files = new Map<string, ExportFile>()
  for (const entry of manifest.exports) {
    const { io, ...options } = entry.options
    const result = exportPlan(plan, { format: entry.format, ...options, io: io ?? NO_IO_FACTS })
    for (const file of result.files) files.set(file.path, file)
  }
  return [...files.values()]
}
