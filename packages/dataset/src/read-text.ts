import { createReadStream } from 'node:fs'

/** How a count reports its progress and is cancelled. */
export interface ReadOptions {
  /** Called after each chunk with the bytes read so far; the last call has `bytesRead === totalBytes`. */
  onProgress?: ((bytesRead: number, totalBytes: number) => void) | undefined
  signal?: AbortSignal | undefined
}

const CHUNK_BYTES = 1 << 20

/**
 * The file as UTF-8 strings of about 1 MiB each, never the whole file: memory stays bounded whatever its size.
 * The stream's decoder keeps a character split between two chunks whole.
 */
async function* utf8Chunks(path: string, totalBytes: number, options: ReadOptions): AsyncGenerator<string> {
  const stream = createReadStream(path, {
    encoding: 'utf8',
    highWaterMark: CHUNK_BYTES,
    signal: options.signal,
  })
  let reported = 0
  for await (const chunk of stream) {
    yield chunk as string
    // A file that grows while it is read must not push the bar past its end.
    reported = Math.min(stream.bytesRead, totalBytes)
    options.onProgress?.(reported, totalBytes)
  }
  if (reported !== totalBytes) options.onProgress?.(totalBytes, totalBytes)
}

/** One line of a text file, without its line break, and its 1-based number. */
export interface NumberedLine {
  text: string
  line: number
}

/** Thrown (and turned into the caller's error) when a line outgrows `maxLineChars` without a line break. */
export class LineTooLongError extends Error {
  constructor(readonly line: number) {
    super(`line ${line} is longer than the limit`)
  }
}

/**
 * Splits text chunks into numbered lines (a `\r\n` break counts as one). Each chunk is searched once for line
 * breaks and the start of an unfinished line is kept as a list of pieces, joined once when its break comes: the
 * work is linear in the characters pushed however long the lines, and a line is refused (LineTooLongError) as
 * soon as it passes `maxLineChars`.
 */
export class NumberedLines {
  private carry: string[] = []
  private carryChars = 0
  private line = 0

  constructor(private readonly maxLineChars: number) {}

  push(chunk: string): NumberedLine[] {
    const out: NumberedLine[] = []
    let start = 0
    for (let newline = chunk.indexOf('\n'); newline >= 0; newline = chunk.indexOf('\n', start)) {
      out.push(this.take(chunk.slice(start, newline)))
      start = newline + 1
    }
    if (start < chunk.length) {
      this.carry.push(start === 0 ? chunk : chunk.slice(start))
      this.carryChars += chunk.length - start
      if (this.carryChars > this.maxLineChars) throw new LineTooLongError(this.line + 1)
    }
    return out
  }

  /** The last line, when the text does not end with a line break. */
  end(): NumberedLine[] {
    return this.carryChars > 0 ? [this.take('')] : []
  }

  private take(tail: string): NumberedLine {
    const text = this.carry.length === 0 ? tail : this.carry.join('') + tail
    this.carry = []
    this.carryChars = 0
    this.line += 1
    if (text.length > this.maxLineChars) throw new LineTooLongError(this.line)
    return { text: text.endsWith('\r') ? text.slice(0, -1) : text, line: this.line }
  }
}

/** The lines of a file, streamed (see NumberedLines). */
export async function* fileLines(
  path: string,
  totalBytes: number,
  options: ReadOptions,
  maxLineChars: number,
): AsyncGenerator<NumberedLine> {
  const lines = new NumberedLines(maxLineChars)
  for await (const chunk of utf8Chunks(path, totalBytes, options)) yield* lines.push(chunk)
  yield* lines.end()
}

/** Where to cut a long run of text with no line break: after its last whitespace, else anywhere but mid-pair. */
function cutPoint(text: string, limit: number): number {
  const space = Math.max(text.lastIndexOf(' ', limit), text.lastIndexOf('\t', limit))
  if (space > 0) return space + 1
  const code = text.charCodeAt(limit - 1)
  // Do not split a UTF-16 surrogate pair (an emoji, say) into two invalid halves.
  return code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit
}

/**
 * A text file in pieces that end at line breaks (the break stays with its line), each at most about
 * `maxPieceChars`; a longer line is cut after a space. Tokenizing piece by piece matches tokenizing the whole
 * text except at the cuts, where a tokenizer could have merged across.
 */
export async function* filePieces(
  path: string,
  totalBytes: number,
  options: ReadOptions,
  maxPieceChars: number,
): AsyncGenerator<string> {
  let carry = ''
  for await (const chunk of utf8Chunks(path, totalBytes, options)) {
    carry += chunk
    const lastBreak = carry.lastIndexOf('\n')
    if (lastBreak >= 0) {
      yield* splitLong(carry.slice(0, lastBreak + 1), maxPieceChars)
      carry = carry.slice(lastBreak + 1)
    }
    while (carry.length > maxPieceChars) {
      const cut = cutPoint(carry, maxPieceChars)
      yield carry.slice(0, cut)
      carry = carry.slice(cut)
    }
  }
  if (carry.length > 0) yield carry
}

/** Pieces of whole lines no longer than `maxChars`, each cut after a line break where one falls inside. */
function* splitLong(text: string, maxChars: number): Generator<string> {
  let rest = text
  while (rest.length > maxChars) {
    const lastBreak = rest.lastIndexOf('\n', maxChars - 1)
    const cut = lastBreak >= 0 ? lastBreak + 1 : cutPoint(rest, maxChars)
    yield rest.slice(0, cut)
    rest = rest.slice(cut)
  }
  if (rest.length > 0) yield rest
}
