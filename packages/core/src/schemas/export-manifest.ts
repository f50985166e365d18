import { z } from 'zod'
import { StorageKind } from './hardware-profile.js'
import { TrainingPlan } from './training-plan.js'

/** What the dataset decisions of an export knew about the machine's storage, network and memory. */
export const ExportIoFacts = z
  .object({
    storage: z.array(
      z
        .object({
          mount: z.string().min(1),
          kind: StorageKind,
          freeBytes: z.number().nonnegative().finite(),
          readMBs: z.number().nonnegative().finite().nullable(),
        })
        .strict(),
    ),
    networkMBs: z.number().nonnegative().finite().nullable(),
    ramBytes: z.number().nonnegative().finite().nullable(),
    usableCores: z.number().int().positive().max(1_000_000).nullable(),
  })
  .strict()
export type ExportIoFacts = z.infer<typeof ExportIoFacts>

/** The options an export was made with: enough to make the same export again from another plan. */
export const ExportManifestOptions = z
  .object({
    nodes: z.number().int().positive().max(100_000).nullable(),
    meta: z.boolean(),
    datasetBytes: z.number().positive().finite().nullable(),
    hosts: z.array(z.string().min(1)),
    portable: z.boolean(),
    io: ExportIoFacts.nullable(),
  })
  .strict()
export type ExportManifestOptions = z.infer<typeof ExportManifestOptions>

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'a lowercase hex SHA-256')

/**
 * `rigfit-export.json`, written by `rigfit export --out DIR` beside the files: which formats the folder holds, the
 * options each was made with and a hash of each file. `rigfit monitor --configs DIR` reads it to regenerate the
 * same exports when a relaunch changes the settings, and the hashes show which files were edited since.
 */
export const ExportManifest = z
  .object({
    schemaVersion: z.literal(1),
    rigfitVersion: z.string().min(1),
    exports: z
      .array(
        z
          .object({
            format: z.string().min(1),
            /** The plan as given to the export, before `nodes` rescaled it. */
            plan: TrainingPlan,
            options: ExportManifestOptions,
            files: z.array(z.object({ path: z.string().min(1), sha256: Sha256 }).strict()).min(1),
          })
          .strict(),
      )
      .min(1),
  })
  .strict()
export type ExportManifest = z.infer<typeof ExportManifest>
