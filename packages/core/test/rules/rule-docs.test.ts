import { describe, expect, it } from 'vitest'
import { ruleDocProblems } from '../../src/rules/rule-docs.js'
import { Rule } from '../../src/schemas/rule-pack.js'

const rule = Rule.parse({
  id: 'demo-compile-off',
  description: 'torch.compile off on the demo GPU.',
  priority: 70,
  conditions: { all: [{ fact: 'gpuCatalogId', operator: 'in', value: ['demo'] }] },
  event: { type: 'set', params: { setting: 'compile', value: false, reason: 'The demo GPU miscompiles.' } },
})

const doc = `# demo-compile-off

torch.compile off on the demo GPU.

- **Pack:** demo
- **Decides:** sets \`compile\` to \`false\`
- **Priority:** 70
- **When:** \`gpuCatalogId\` in "demo"

## What it says

The demo GPU miscompiles.

## Why

Anything the author wants to say.
`

describe('ruleDocProblems', () => {
  it('accepts a doc that matches its rule', () => {
    expect(ruleDocProblems(doc, rule, 'demo')).toEqual([])
  })

  it.each([
    ['a stale priority', doc.replace('**Priority:** 70', '**Priority:** 60'), /Priority/],
    ['another description', doc.replace('off on the demo GPU.', 'on everywhere.'), /description/],
    ['another decision', doc.replace('to `false`', 'to `true`'), /Decides/],
    ['a fact left out', doc.replace('`gpuCatalogId` in "demo"', 'always'), /gpuCatalogId/],
    ['another message', doc.replace('The demo GPU miscompiles.', 'Fine.'), /What it says/],
    ['another pack', doc, /Pack/],
  ])('reports %s', (_, text, problem) => {
    const pack = text === doc ? 'other' : 'demo'
    expect(ruleDocProblems(text, rule, pack).join('\n')).toMatch(problem)
  })
})
