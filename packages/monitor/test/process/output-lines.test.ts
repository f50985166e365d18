import { describe, expect, it } from 'vitest'
import { OutputLines, type SegmentKind } from '../../src/process/output-lines.js'

function split(chunks: string[]): [string, SegmentKind][] {
  const out: [string, SegmentKind][] = []
  const lines = new OutputLines((text, kind) => out.push([text, kind]))
  for (const chunk of chunks) lines.push(chunk)
  lines.flush()
  return out
}

describe('OutputLines', () => {
  it('joins lines across chunks and handles CRLF split between chunks', () => {
    expect(split(['step 1\nst', 'ep 2\r', '\nlast'])).toEqual([
      ['step 1', 'line'],
      ['step 2', 'line'],
      ['last', 'line'],
    ])
  })

  it('reports tqdm redraws as progress and the final state of the bar as the line', () => {
    expect(split(['\r 10%|#  | 1/10', '\r 20%|## | 2/10\r100%|###| 10/10\n'])).toEqual([
      [' 10%|#  | 1/10', 'progress'],
      [' 20%|## | 2/10', 'progress'],
      ['100%|###| 10/10', 'line'],
    ])
  })
})
