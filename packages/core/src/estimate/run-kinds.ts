import type { RunKind } from '../schemas/index.js'

/** What a verdict band is computed from: one kind of run, or every run (`all`). */
export type BandBasis = RunKind | 'all'

/**
 * The kind each kind pools into when it has too few measured runs for a band of its own: a multi-GPU run into its
 * method on any number of GPUs (the same terms, sharded), a method into every run.
 */
export const PARENT_KIND: Readonly<Record<BandBasis, BandBasis | null>> = {
  'full-multi-gpu': 'full',
  'lora-multi-gpu': 'lora',
  'qlora-multi-gpu': 'qlora',
  full: 'all',
  lora: 'all',
  qlora: 'all',
  all: null,
}

/** The kind itself, then its parent, up to `all`. */
export function bandPath(kind: BandBasis): BandBasis[] {
  const path: BandBasis[] = []
  for (let at: BandBasis | null = kind; at !== null; at = PARENT_KIND[at]) path.push(at)
  return path
}

/** Whether a run of `kind` counts toward the band of `basis`: the basis itself or a kind pooled under it. */
export function poolsInto(kind: RunKind, basis: BandBasis): boolean {
  return bandPath(kind).includes(basis)
}
