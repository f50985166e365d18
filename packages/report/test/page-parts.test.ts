import { EstimateInput, estimate, findCatalogModel, RigfitError } from '@rigfit/core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { content, escapeHtml, raw } from '../src/html.js'
import { MEMORY_PARTS, memoryRows, PART_LABELS, partBytes } from '../src/memory-parts.js'
import { parseRunLog } from '../src/run-log.js'

describe('escapeHtml', () => {
  it('leaves no character that opens markup or ends an attribute in any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const escaped = escapeHtml(text)
        expect(escaped).not.toMatch(/[<>"']/)
        // Every & starts one of the five entities.
        expect(escaped.replace(/&(amp|lt|gt|quot|#39);/g, '')).not.toContain('&')
      }),
    )
  })

  it('escapes values, keeps trusted fragments and draws a missing value as a dash', () => {
    expect(content('<b>"x" & \'y\'</b>')).toBe('&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;')
    expect(content(raw('<b>x</b>'))).toBe('<b>x</b>')
    expect(content(3.5)).toBe('3.5')
    expect(content(null)).toBe('—')
  })
})

describe('memory parts', () => {
  const gpt2 = findCatalogModel('gpt2')
  if (!gpt2) throw new Error('gpt2 is in the catalog')
  const device = {
    name: 'A100',
    kind: 'cuda' as const,
    vramBytes: 80 * 2 ** 30,
    fp16TensorTflops: 312,
    fp32Tflops: 19.5,
    memoryBandwidthGBs: 2039,
    computeCapability: '8.0',
  }

  it('draws every part of real estimates, the allocator reserve as reserved minus the peak', () => {
    for (const microBatch of [1, 4, 16]) {
      for (const precision of ['fp32', 'bf16-mixed'] as const) {
        const memory = estimate(
          EstimateInput.parse({ model: gpt2, seq: 512, microBatch, precision, device }),
        ).perDevice
        const rows = memoryRows('estimate', memory)
        expect(rows.map((row) => row.part)).toEqual(PART_LABELS)
        expect(rows.map((row) => row.order)).toEqual(MEMORY_PARTS.map((_, index) => index))
        expect(partBytes(memory, 'reserve')).toBe(memory.reserved - memory.peakAllocated)
        expect(partBytes(memory, 'weights')).toBe(memory.weights)
        for (const row of rows) expect(row.gib, row.part).toBeGreaterThanOrEqual(0)
      }
    }
  })
})

describe('parseRunLog', () => {
  it('leaves out a last line still being written', () => {
    expect(parseRunLog('', 'monitor.jsonl')).toEqual([])
    expect(parseRunLog('{"type":"sta', 'monitor.jsonl')).toEqual([])
  })

  it('names the file and the line of a line that is not a record', () => {
    expect(() => parseRunLog('\nnot json\n', 'run/monitor.jsonl')).toThrow(
      'run/monitor.jsonl line 2 is not JSON',
    )
    expect(() => parseRunLog('{"type":"nothing"}\n', 'monitor.jsonl')).toThrow(
      /monitor\.jsonl line 1 is not a monitor record/,
    )
    const error = (() => {
      try {
        parseRunLog('[]\n', 'monitor.jsonl')
      } catch (thrown) {
        return thrown
      }
      return null
    })()
    expect(error).toBeInstanceOf(RigfitError)
    expect((error as RigfitError).code).toBe('E_RUN_LOG_INVALID')
  })
})
