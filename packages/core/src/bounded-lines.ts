/**
 * Splits a stream of text chunks into lines without ever holding more than `maxChars` of one line: a longer
 * line is passed on cut at `maxChars` (marked by `cut`), and the rest of it, up to its newline, is dropped. Each
 * chunk is scanned once, so the work is linear in the bytes read whatever the line lengths.
 */
export class BoundedLines {
  private carry: string[] = []
  private carryChars = 0
  private dropping = false

  constructor(
    private readonly maxChars: number,
    private readonly onLine: (line: string, cut: boolean) => void,
  ) {}

  push(chunk: string): void {
    let start = 0
    for (;;) {
      const newline = chunk.indexOf('\n', start)
      if (newline < 0) {
        this.keep(chunk.slice(start))
        return
      }
      this.keep(chunk.slice(start, newline))
      this.emit()
      start = newline + 1
    }
  }

  /** Passes on what is left when the stream ends. */
  flush(): void {
    if (this.carryChars > 0 || this.dropping) this.emit()
  }

  private keep(piece: string): void {
    if (this.dropping || piece === '') return
    const room = this.maxChars - this.carryChars
    if (piece.length <= room) {
      this.carry.push(piece)
      this.carryChars += piece.length
      return
    }
    this.carry.push(piece.slice(0, room))
    this.carryChars = this.maxChars
    this.onLine(this.carry.join(''), true)
    this.carry = []
    this.dropping = true
  }

  private emit(): void {
    if (!this.dropping) this.onLine(this.carry.join(''), false)
    this.carry = []
    this.carryChars = 0
    this.dropping = false
  }
}
