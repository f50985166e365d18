import type { z } from 'zod'
import { CalibrationRecord } from './calibration-record.js'
import { ClusterProfile } from './cluster-profile.js'
import { EstimateInput, EstimateResult, ValidationRow } from './estimate.js'
import { ExportManifest } from './export-manifest.js'
import { GpuCatalog } from './gpu-catalog.js'
import { HardwareProfile } from './hardware-profile.js'
import { ModelSpec } from './model-spec.js'
import { MonitorRecord } from './monitor-record.js'
import { RuleCaseFile } from './rule-cases.js'
import { PackManifest, Rule, RulePack } from './rule-pack.js'
import { TrainingPlan } from './training-plan.js'
import { Workload } from './workload.js'

/** Every public schema, by the file name its JSON Schema is generated into (schemas/<name>.schema.json). */
export const PUBLIC_SCHEMAS: Record<string, z.ZodType> = {
  'hardware-profile': HardwareProfile,
  'cluster-profile': ClusterProfile,
  'model-spec': ModelSpec,
  workload: Workload,
  'training-plan': TrainingPlan,
  'rule-pack': RulePack,
  'estimate-result': EstimateResult,
  'estimate-input': EstimateInput,
  'validation-row': ValidationRow,
  'gpu-catalog': GpuCatalog,
  'monitor-record': MonitorRecord,
  'export-manifest': ExportManifest,
  'calibration-record': CalibrationRecord,
  'pack-manifest': PackManifest,
  rule: Rule,
  'rule-cases': RuleCaseFile,
}
