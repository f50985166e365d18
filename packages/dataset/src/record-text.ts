/**
 * Which text of one training example is counted. The layouts are the ones trainers read (TRL's SFTTrainer,
 * Axolotl, LLaMA-Factory); the first layout whose field is present wins, so a row with both `text` and
 * `messages` counts `text` once rather than the same words twice.
 *
 *   1. `text`                                   plain / pretraining text
 *   2. `messages[].content`                      chat (OpenAI / TRL conversational); content may be a string or a
 *                                                list of parts, whose `text` parts count
 *   3. `conversations[].value`                   ShareGPT
 *   4. `prompt` + `completion` / `response`      prompt-completion pairs
 *   5. `instruction` + `input` + `output`        Alpaca
 *
 * Each string is tokenized on its own, as a chat template tokenizes each turn.
 */

/** A layout and the strings it found in one record. */
export interface RecordText {
  /** The layout's name as printed to users, e.g. `messages[].content`. */
  layout: string
  texts: string[]
}

/** Every top-level field a layout reads: a parquet reader loads only these columns. */
export const TEXT_FIELDS = [
  'text',
  'messages',
  'conversations',
  'prompt',
  'completion',
  'response',
  'instruction',
  'input',
  'output',
] as const

/** The fields that choose a layout: a table with one of these columns is read by the layouts. */
export const LEADING_TEXT_FIELDS = ['text', 'messages', 'conversations', 'prompt', 'instruction'] as const

/** The layouts in the order they are tried, for error messages and documentation. */
export const TEXT_LAYOUTS = [
  'text',
  'messages[].content',
  'conversations[].value',
  'prompt + completion/response',
  'instruction + input + output',
] as const

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Parquet readers hand back list columns as arrays or array-likes; JSON gives arrays. */
function listOf(value: unknown): unknown[] | null {
  if (Array.isArray(value)) return value
  return null
}

/** A chat turn's content: a string, or a list of parts where `{type: 'text', text}` parts hold the text. */
function contentTexts(content: unknown): string[] {
  if (typeof content === 'string') return [content]
  const parts = listOf(content)
  if (parts === null) return []
  return parts.flatMap((part) => {
    if (typeof part === 'string') return [part]
    if (isRecord(part) && typeof part.text === 'string') return [part.text]
    return []
  })
}

function turnTexts(turns: unknown, key: 'content' | 'value'): string[] | null {
  const list = listOf(turns)
  if (list === null) return null
  return list.flatMap((turn) => (isRecord(turn) ? contentTexts(turn[key]) : []))
}

function stringsOf(record: Record<string, unknown>, keys: readonly string[]): string[] {
  return keys.flatMap((key) => {
    const value = record[key]
    return typeof value === 'string' ? [value] : []
  })
}

/**
 * The text of one record, or null when no layout matches. A layout is chosen by its leading field: a string for
 * `text`, `prompt` and `instruction`, a list for `messages` and `conversations` (an empty list counts no text).
 */
export function recordText(record: Record<string, unknown>): RecordText | null {
  if (typeof record.text === 'string') return { layout: 'text', texts: [record.text] }
  const messages = turnTexts(record.messages, 'content')
  if (messages !== null) return { layout: 'messages[].content', texts: messages }
  const conversations = turnTexts(record.conversations, 'value')
  if (conversations !== null) return { layout: 'conversations[].value', texts: conversations }
  if (typeof record.prompt === 'string') {
    return {
      layout: 'prompt + completion/response',
      texts: stringsOf(record, ['prompt', 'completion', 'response']),
    }
  }
  if (typeof record.instruction === 'string') {
    return {
      layout: 'instruction + input + output',
      texts: stringsOf(record, ['instruction', 'input', 'output']),
    }
  }
  return null
}
