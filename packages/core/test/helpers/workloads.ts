import { findCatalogModel } from '../../src/model/index.js'
import { WORKLOAD_SCHEMA_VERSION, type Workload } from '../../src/schemas/workload.js'

/** Pretraining with nothing else asked: what `rigfit plan` plans without flags; `patch` sets the rest. */
export const pretrain = (patch: Partial<Workload> = {}): Workload => ({
  schemaVersion: WORKLOAD_SCHEMA_VERSION,
  kind: 'pretrain',
  model: null,
  method: 'auto',
  frozenModels: [],
  datasetBytes: null,
  timeBudgetHours: null,
  targetEffectiveBatch: null,
  seq: null,
  nodes: 1,
  ...patch,
})

/** A fine-tune of a catalog model (`--model ID`), the method left to the planner unless `patch` says. */
export const finetune = (model: string, patch: Partial<Workload> = {}): Workload =>
  pretrain({ kind: 'finetune', model: findCatalogModel(model) ?? null, ...patch })
