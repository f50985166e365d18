import { describe, expect, it } from 'vitest'
import { rigfitJson } from './helpers/run-cli.js'

// A --gpu name that fits several catalog variants is planned for one of them, and the plan says which and how
// to name the others; a name that fits one variant plans without that warning.
const variantWarning = (plan: { warnings: { id: string; message: string }[] }) =>
  plan.warnings.find((w) => w.id === 'assumed-gpu-variant')

describe('ambiguous GPU names', () => {
  it('"A100" is planned for one variant, named with the others and how to pick one', () => {
    const plan = rigfitJson(['plan', '--gpu', 'A100', '--model', 'gpt2'])
    const warning = variantWarning(plan)
    expect(warning?.message).toContain(`planned for ${plan.hardware.gpuName}`)
    for (const other of ['A100 80GB SXM4', 'A100 40GB PCIe']) {
      if (other !== plan.hardware.gpuName) expect(warning?.message).toContain(other)
    }
    expect(warning?.message).toMatch(/--gpu "A100 \d+GB (SXM4|PCIe)"/)
  })

  it('the name the warning suggests plans without the warning, for the variant it names', () => {
    const plan = rigfitJson(['plan', '--gpu', 'A100', '--model', 'gpt2'])
    const suggested = /--gpu "([^"]+)"/.exec(variantWarning(plan)?.message ?? '')?.[1] as string
    const exact = rigfitJson(['plan', '--gpu', suggested, '--model', 'gpt2'])
    expect(variantWarning(exact)).toBeUndefined()
    expect(exact.hardware.gpuName).toBe(suggested)
  })

  it.each(['RTX 4090', 'H100 SXM5', 'T4'])('"%s" names one GPU: no warning', (name) => {
    expect(variantWarning(rigfitJson(['plan', '--gpu', name, '--model', 'gpt2']))).toBeUndefined()
  })
})
