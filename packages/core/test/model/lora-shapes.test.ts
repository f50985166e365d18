import { describe, expect, it } from 'vitest'
import { listModels } from '../../src/model/catalog.js'
import { distinctTargets, loraCopies, loraInWidth, loraOutWidth } from '../../src/model/lora-shapes.js'
import { modelParts } from '../../src/model/params.js'
import { LoraTarget } from '../../src/schemas/estimate.js'

const TARGETS = LoraTarget.options

describe('the linear layers LoRA targets wrap', () => {
  it.each(listModels().map((spec) => [spec.id, spec] as const))(
    '%s: the seven targets cover every linear weight of a block, each once',
    (_id, spec) => {
      const covered = TARGETS.reduce(
        (sum, target) =>
          sum + loraInWidth(spec, target) * loraOutWidth(spec, target) * loraCopies(spec, target),
        0,
      )
      expect(covered).toBe(modelParts(spec).layerLinear)
    },
  )

  it('lists each target once, in the order given, and answers the same list for the same input', () => {
    const targets: LoraTarget[] = ['v', 'q', 'v', 'down', 'q']
    expect(distinctTargets(targets)).toEqual(['v', 'q', 'down'])
    expect(distinctTargets(targets)).toBe(distinctTargets(targets))
    expect(distinctTargets(['q', 'k'])).toEqual(['q', 'k'])
  })
})
