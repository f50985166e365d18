import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { evaluateValidationRow, validationInput } from '../../src/estimate/validation.js'
import { fitsSpeedConstants } from '../../src/estimate/validation-fit.js'
import { speedMethod } from '../../src/estimate/validation-speed.js'
import { loadValidationRows } from '../../src/node/validation-dataset.js'

const rows = loadValidationRows()
const hfHarness = rows.filter((row) => row.origin === 'calibrate' && row.stack.startsWith('hf@'))
const hfSpeed = hfHarness.filter((row) => row.metric === 'tokens_per_second')
const configurationOf = (says: string) => says.split(' for ')[1]

describe("rigfit's own runs of the Transformers stack (examples/calibrate/hf_stack.py)", () => {
  it('measure full, LoRA and MoE training through the Trainer on a GPU, with peak memory beside each speed', () => {
    expect(hfSpeed.length).toBeGreaterThanOrEqual(10)
    for (const method of ['full', 'lora', 'moe'] as const) {
      expect(
        hfSpeed.some((row) => speedMethod(row) === method),
        method,
      ).toBe(true)
    }
    for (const row of hfSpeed) {
      expect(row.gpu.kind, row.id).toBe('cuda')
      const configuration = configurationOf(row.source.says)
      for (const metric of ['max_memory_allocated', 'max_memory_reserved'] as const) {
        const memory = hfHarness.filter(
          (other) => other.metric === metric && configurationOf(other.source.says) === configuration,
        )
        expect(memory, `${row.id} ${metric}`).toHaveLength(1)
      }
    }
  })

  it("hold every configuration of examples/calibrate/hf_grid.py's grid, measured or out of memory", () => {
    const script = readFileSync(new URL('../../../../examples/calibrate/hf_grid.py', import.meta.url), 'utf8')
    const grid = script.slice(script.indexOf('def grid()'), script.indexOf('def hf_config_json'))
    const names = [...grid.matchAll(/^\s+\("([a-z0-9-]+)", /gm)].map((m) => m[1])
    expect(names.length).toBeGreaterThanOrEqual(15)
    const measured = new Set(hfHarness.map((row) => configurationOf(row.source.says)))
    expect([...measured].sort()).toEqual([...names].sort())
  })

  it("run the model's own activation code, and fit the step time's constants as every GPU row does", () => {
    for (const row of hfHarness) expect(validationInput(row).pythonActivations, row.id).toBe(true)
    expect(hfSpeed.every(fitsSpeedConstants)).toBe(true)
    for (const row of hfSpeed) expect(Number.isFinite(evaluateValidationRow(row).error), row.id).toBe(true)
  })
})
