import { describe, expect, it } from 'vitest'
import { recordText } from '../src/record-text.js'

describe('recordText', () => {
  it('reads each documented layout', () => {
    expect(recordText({ text: 'plain' })).toEqual({ layout: 'text', texts: ['plain'] })
    expect(
      recordText({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image' }] },
          { role: 'assistant', content: 'hello' },
        ],
      }),
    ).toEqual({ layout: 'messages[].content', texts: ['be brief', 'hi', 'hello'] })
    expect(
      recordText({
        conversations: [
          { from: 'human', value: 'q' },
          { from: 'gpt', value: 'a' },
        ],
      }),
    ).toEqual({ layout: 'conversations[].value', texts: ['q', 'a'] })
    expect(recordText({ prompt: 'p', completion: 'c' })).toEqual({
      layout: 'prompt + completion/response',
      texts: ['p', 'c'],
    })
    expect(recordText({ prompt: 'p', response: 'r' })?.texts).toEqual(['p', 'r'])
    expect(recordText({ instruction: 'i', input: '', output: 'o' })).toEqual({
      layout: 'instruction + input + output',
      texts: ['i', '', 'o'],
    })
  })

  it('takes the first layout present, so no text counts twice', () => {
    expect(recordText({ text: 'once', messages: [{ content: 'twice' }], prompt: 'thrice' })?.texts).toEqual([
      'once',
    ])
    expect(recordText({ messages: [{ content: 'm' }], conversations: [{ value: 'c' }] })?.layout).toBe(
      'messages[].content',
    )
  })

  it('matches no layout for rows without a leading text field', () => {
    expect(recordText({})).toBeNull()
    expect(recordText({ text: null, id: 3 })).toBeNull()
    expect(recordText({ input: 'only the input', output: 'x' })).toBeNull()
    expect(recordText({ completion: 'no prompt' })).toBeNull()
  })

  it('skips turns and parts that hold no string', () => {
    expect(recordText({ messages: [null, { content: 3 }, { content: 'ok' }, 'loose'] })?.texts).toEqual([
      'ok',
    ])
    expect(recordText({ messages: [] })).toEqual({ layout: 'messages[].content', texts: [] })
  })
})
