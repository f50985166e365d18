import { describe, expect, it } from 'vitest'
import type { RunKind } from '../schemas/index.js'
import { type FitBand, fallbackBand, fitVerdict, runKind } from './confidence.js'

const none: FitBand = { under: 0, over: 0, rows: 0 }
const bands = (over: Partial<Record<RunKind, FitBand>>): Record<RunKind, FitBand> => ({
  full: none,
  lora: none,
  qlora: none,
  'full-multi-gpu': none,
  'lora-multi-gpu': none,
  'qlora-multi-gpu': none,
  ...over,
})

describe('run kinds and fit verdicts', () => {
  it('names the kind from the method and the GPU count', () => {
    const lora = { rank: 8, targets: ['q' as const], dropout: 0 }
    expect(runKind({ lora: null, quant: 'none', gpus: 1, nodes: 1 })).toBe('full')
    expect(runKind({ lora, quant: 'none', gpus: 1, nodes: 1 })).toBe('lora')
    expect(runKind({ lora, quant: 'nf4', gpus: 1, nodes: 1 })).toBe('qlora')
    expect(runKind({ lora, quant: 'int8', gpus: 1, nodes: 2 })).toBe('qlora-multi-gpu')
    expect(runKind({ lora: null, quant: 'none', gpus: 8, nodes: 1 })).toBe('full-multi-gpu')
  })

  it('is borderline wherever the band straddles the capacity', () => {
    const b = bands({ full: { under: 0.2, over: 0.1, rows: 4 } })
    for (const total of [50, 80, 83.3, 90, 100, 111, 120]) {
      const { verdict, confidence } = fitVerdict(total * 1e9, 100e9, 'full', b)
      const expected = total * 1.2 <= 100 ? 'fits' : total * 0.9 > 100 ? 'does-not-fit' : 'borderline'
      expect(verdict, String(total)).toBe(expected)
      expect(confidence).toMatchObject({ kind: 'full', under: 0.2, over: 0.1, rows: 4 })
    }
  })

  it('gives a kind without measured runs the widest measured band', () => {
    const b = bands({ full: { under: 0.2, over: 0.05, rows: 4 }, lora: { under: 0.1, over: 0.3, rows: 2 } })
    expect(fallbackBand(b)).toEqual({ under: 0.2, over: 0.3, rows: 0 })
    expect(fitVerdict(90e9, 100e9, 'qlora', b).confidence).toMatchObject({ under: 0.2, over: 0.3, rows: 0 })
    expect(fitVerdict(90e9, 100e9, 'qlora', b).verdict).toBe('borderline')
    // A multi-GPU kind without runs takes its method's one-GPU band.
    expect(fallbackBand(b, 'lora-multi-gpu')).toEqual({ under: 0.1, over: 0.3, rows: 0 })
    expect(fitVerdict(50e9, 100e9, 'full-multi-gpu', b).confidence).toMatchObject({ under: 0.2, over: 0.05 })
  })
})
