import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { CORE_PACK_ROOT, loadCorePack } from '../../src/node/core-pack.js'
import { RuleTester } from '../../src/node/rule-tester.js'
import type { RuleTestCase } from '../../src/rules/rule-tester.js'
import { HardwareProfile } from '../../src/schemas/hardware-profile.js'

const profile = () =>
  HardwareProfile.parse(JSON.parse(readFileSync(`${CORE_PACK_ROOT}fixtures/desktop-rtx3070.json`, 'utf8')))
const base = (): RuleTestCase => ({
  name: 'rtx 3070',
  profile: profile(),
  mode: 'balanced',
  expect: { settings: { device: 'cuda' } },
})

new RuleTester(loadCorePack(), { describe, it }).run('RuleTester.run registers its cases', {
  cases: [
    base(),
    { ...base(), name: 'rtx 3070 extreme', mode: 'extreme', expect: { settings: { memoryFraction: 0.95 } } },
  ],
})

describe('RuleTester', () => {
  const tester = new RuleTester(loadCorePack())

  it('asks for describe and it when the test framework does not provide them globally', () => {
    expect(() => tester.run('no framework', { cases: [base()] })).toThrow(/RuleTester needs describe\(\)/)
  })

  it('reports every expectation that does not hold', async () => {
    const result = await tester.check({
      ...base(),
      expect: {
        settings: { precision: 'fp32', dataloaderWorkers: 2 },
        decidedBy: { precision: 'core-precision-fp32' },
        undecided: ['compile'],
        caps: { threads: 3 },
        forbids: [{ setting: 'attention', value: 'flash' }],
        warnings: ['on-battery'],
        suggestions: ['nvme-for-datasets'],
        absent: ['low-ram'],
        fired: ['core-gpu-hot-warning'],
        notFired: ['core-device-cuda'],
      },
    })
    expect(result.passed).toBe(false)
    expect(result.failures).toEqual([
      'precision: expected "fp32", got "bf16-mixed" (decided by core/core-precision-bf16)',
      'precision: expected to be decided by core-precision-fp32, was decided by core/core-precision-bf16',
      'compile: expected no decision, got true (decided by core/core-compile-gpu)',
      'cap on threads: expected 3, got 16 (by core/core-threads-cap-usable-cores)',
      'expected attention = "flash" to be forbidden',
      'expected warning "on-battery"; raised: none',
      'expected suggestion "nvme-for-datasets"; raised: none',
      'expected rule core-gpu-hot-warning to fire',
      'expected rule core-device-cuda not to fire',
    ])
  })

  it('freezes its inputs', async () => {
    const testCase = base()
    await tester.check(testCase)
    expect(Object.isFrozen(testCase.profile.gpus[0])).toBe(true)
  })

  it('refuses duplicate cases, duplicate names and unknown ids', () => {
    expect(() => tester.validateCases([base(), { ...base(), name: 'again' }])).toThrow(
      /duplicate case: "again" has the same input as "rtx 3070"/,
    )
    expect(() => tester.validateCases([base(), { ...base(), mode: 'extreme' }])).toThrow(
      /duplicate case name/,
    )
    expect(() => tester.validateCases([{ ...base(), expect: { warnings: ['no-such-message'] } }])).toThrow(
      /no rule raises the message id "no-such-message"/,
    )
    expect(() => tester.validateCases([{ ...base(), expect: { decidedBy: { tf32: 'core-nope' } } }])).toThrow(
      /no rule "core-nope"/,
    )
    expect(() =>
      tester.validateCases([{ ...base(), expect: { settings: { precision: 'fp8' } } }] as RuleTestCase[]),
    ).toThrow(/invalid expectation/)
  })

  it('lists the rules of the tested pack no case fires', async () => {
    const { results, unfired } = await tester.checkAll([base()])
    expect(results[0]?.passed).toBe(true)
    expect(unfired).toContain('core/core-on-battery-warning')
    expect(unfired).not.toContain('core/core-device-cuda')
  })
})
