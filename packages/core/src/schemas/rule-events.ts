import { z } from 'zod'
import { oneLineText } from './common.js'
import { FactReference, factKind } from './rule-conditions.js'
import { SETTING_VALUES, SettingName, type SettingValue, settingKind } from './rule-settings.js'

/** Why a rule decided what it did, in words shown to the user. */
const Reason = oneLineText(500)
export const MessageId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'message ids are kebab-case: a-z, 0-9 and -')
  .max(80)
const EventValue = z.union([z.string().max(200), z.number(), z.boolean(), FactReference])

function checkSettingValue(
  setting: SettingName,
  value: SettingValue | FactReference,
  ctx: z.RefinementCtx,
): void {
  if (typeof value === 'object') {
    const kind = factKind(value.fact)
    if (settingKind(setting) !== 'number' || kind !== 'number') {
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: `only numeric settings take a fact's value; "${setting}" is ${settingKind(setting)} and fact "${value.fact}" is ${kind}`,
      })
    }
    return
  }
  const parsed = SETTING_VALUES[setting].safeParse(value)
  if (!parsed.success) {
    ctx.addIssue({
      code: 'custom',
      path: ['value'],
      message: `${JSON.stringify(value)} is not a valid value for setting "${setting}": ${parsed.error.issues[0]?.message ?? 'invalid'}`,
    })
  }
}

export const SetEvent = z.strictObject({
  type: z.literal('set'),
  params: z
    .strictObject({ setting: SettingName, value: EventValue, reason: Reason })
    .superRefine((params, ctx) => checkSettingValue(params.setting, params.value, ctx)),
})
export const CapEvent = z.strictObject({
  type: z.literal('cap'),
  params: z
    .strictObject({ setting: SettingName, max: z.union([z.number(), FactReference]), reason: Reason })
    .superRefine((params, ctx) => {
      if (settingKind(params.setting) !== 'number') {
        ctx.addIssue({
          code: 'custom',
          path: ['setting'],
          message: `only numeric settings can be capped; "${params.setting}" is not`,
        })
        return
      }
      if (typeof params.max === 'object') {
        if (factKind(params.max.fact) !== 'number') {
          ctx.addIssue({ code: 'custom', path: ['max'], message: `fact "${params.max.fact}" is not numeric` })
        }
      } else if (!Number.isFinite(params.max)) {
        ctx.addIssue({ code: 'custom', path: ['max'], message: 'a cap must be a finite number' })
      } else {
        // A cap outside the setting's own range (gpus 0, memoryFraction 1e-300) would break every plan it touches.
        const parsed = SETTING_VALUES[params.setting].safeParse(params.max)
        if (!parsed.success) {
          ctx.addIssue({
            code: 'custom',
            path: ['max'],
            message: `${params.max} is not a valid cap for setting "${params.setting}": ${parsed.error.issues[0]?.message ?? 'invalid'}`,
          })
        }
      }
    }),
})
export const ForbidEvent = z.strictObject({
  type: z.literal('forbid'),
  params: z
    .strictObject({
      setting: SettingName,
      value: z.union([z.string().max(200), z.number(), z.boolean()]),
      reason: Reason,
    })
    .superRefine((params, ctx) => checkSettingValue(params.setting, params.value, ctx)),
})
export const WarnEvent = z.strictObject({
  type: z.literal('warn'),
  params: z.strictObject({ id: MessageId, message: Reason }),
})
export const SuggestEvent = z.strictObject({
  type: z.literal('suggest'),
  params: z.strictObject({
    id: MessageId,
    message: Reason,
    /** The expected gain in plain words: "+40% tokens/s", "-30% memory". */
    expectedGain: z.string().min(1).max(80).optional(),
  }),
})

/** The closed event vocabulary: set a setting, cap it, forbid a value, warn, suggest. */
export const RuleEvent = z.discriminatedUnion('type', [
  SetEvent,
  CapEvent,
  ForbidEvent,
  WarnEvent,
  SuggestEvent,
])
export type RuleEvent = z.infer<typeof RuleEvent>
export type RuleEventType = RuleEvent['type']
