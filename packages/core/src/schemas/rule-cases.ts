import { z } from 'zod'
import { Mode, oneLineText } from './common.js'
import { MessageId, SETTING_VALUES, type SettingName, SettingName as SettingNameSchema } from './rule-pack.js'
import { Workload } from './workload.js'

const SettingValue = z.union([z.string(), z.number(), z.boolean()])

/** What a case expects of the decisions. Every list is "at least these"; `absent` and `notFired` say "none of these". */
export const CaseExpectation = z
  .strictObject({
    /** Decided values, after caps. */
    settings: z.partialRecord(SettingNameSchema, SettingValue).optional(),
    /** The rule (id, or pack/id) that decided each setting. */
    decidedBy: z.partialRecord(SettingNameSchema, z.string().min(1)).optional(),
    /** Settings no rule decides. */
    undecided: z.array(SettingNameSchema).optional(),
    /** The binding cap of each setting. */
    caps: z.partialRecord(SettingNameSchema, z.number()).optional(),
    forbids: z.array(z.strictObject({ setting: SettingNameSchema, value: SettingValue })).optional(),
    warnings: z.array(MessageId).optional(),
    suggestions: z.array(MessageId).optional(),
    /** Message ids that must not be raised, as warnings or suggestions. */
    absent: z.array(MessageId).optional(),
    /** Rule ids (or pack/id) whose conditions must hold. */
    fired: z.array(z.string().min(1)).optional(),
    notFired: z.array(z.string().min(1)).optional(),
    /** Whether the tested pack's appliesTo holds. */
    applies: z.boolean().optional(),
  })
  .superRefine((expect, ctx) => {
    for (const [setting, value] of Object.entries(expect.settings ?? {})) {
      if (!SETTING_VALUES[setting as SettingName].safeParse(value).success) {
        ctx.addIssue({
          code: 'custom',
          path: ['settings', setting],
          message: `${JSON.stringify(value)} is not a valid ${setting}`,
        })
      }
    }
  })
export type CaseExpectation = z.infer<typeof CaseExpectation>

/** One case in a pack's cases/*.json: a fixture profile (by name, or inline), a mode, and what should be decided. */
export const RuleCaseInput = z
  .strictObject({
    name: oneLineText(200),
    /** A fixture profile by file name without .json, looked up in the pack's fixtures/ folder. */
    fixture: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/)
      .optional(),
    /** An inline HardwareProfile instead of a fixture. */
    profile: z.record(z.string(), z.unknown()).optional(),
    /** Changes to the profile by dotted path: { "power.onBattery": true, "gpus.0.driverVersion": "470.82.01" }. */
    with: z.record(z.string().regex(/^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*$/), z.unknown()).optional(),
    mode: Mode,
    workload: Workload.nullable().optional(),
    extra: z
      .strictObject({
        gpus: z.number().int().positive().optional(),
        modelParams: z.number().positive().optional(),
        seq: z.number().int().positive().optional(),
      })
      .optional(),
    expect: CaseExpectation,
  })
  .refine((c) => (c.fixture === undefined) !== (c.profile === undefined), {
    message: 'give exactly one of "fixture" and "profile"',
  })
export type RuleCaseInput = z.infer<typeof RuleCaseInput>

export const RuleCaseFile = z.strictObject({
  $schema: z.string().max(500).optional(),
  cases: z.array(RuleCaseInput).min(1).max(500),
})
export type RuleCaseFile = z.infer<typeof RuleCaseFile>
