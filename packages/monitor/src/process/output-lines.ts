export type SegmentKind = 'line' | 'progress'

const MAX_SEGMENT = 64 * 1024

/**
 * Splits a trainer's output into newline-terminated lines and carriage-return "progress" segments (tqdm
 * redraws its bar with \r and no newline for a whole epoch). A line that redrew itself with \r before its
 * newline is reported as its last state. An over-long run without a terminator is cut, not buffered forever.
 */
export class OutputLines {
  private buffer = ''

  constructor(private readonly onSegment: (text: string, kind: SegmentKind) => void) {}

  push(chunk: string): void {
    this.buffer += chunk
    for (;;) {
      const cr = this.buffer.indexOf('\r')
      const lf = this.buffer.indexOf('\n')
      if (lf >= 0 && (cr < 0 || lf < cr)) {
        this.emitLine(this.buffer.slice(0, lf))
        this.buffer = this.buffer.slice(lf + 1)
        continue
      }
      if (cr >= 0) {
        // A \r at the very end may be the first half of \r\n: wait for the next chunk.
        if (cr === this.buffer.length - 1) break
        if (this.buffer[cr + 1] === '\n') {
          this.emitLine(this.buffer.slice(0, cr))
          this.buffer = this.buffer.slice(cr + 2)
        } else {
          const segment = this.buffer.slice(0, cr)
          if (segment.trim() !== '') this.onSegment(segment, 'progress')
          this.buffer = this.buffer.slice(cr + 1)
        }
        continue
      }
      break
    }
    if (this.buffer.length > MAX_SEGMENT) {
      this.emitLine(this.buffer)
      this.buffer = ''
    }
  }

  /** Emits what is left when the stream ends. */
  flush(): void {
    const rest = this.buffer.replace(/\r$/, '')
    this.buffer = ''
    if (rest !== '') this.emitLine(rest)
  }

  private emitLine(text: string): void {
    this.onSegment(text, 'line')
  }
}
