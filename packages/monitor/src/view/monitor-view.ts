import type { Writable } from 'node:stream'
import { printable } from '@rigfit/core'
import { type Clock, systemClock } from '../runtime/clock.js'
import { renderStatusLine, renderStatusLines, type ViewState } from './status-text.js'

export type ViewMode = 'live' | 'plain' | 'quiet' | 'json'
export type Level = 'info' | 'warning' | 'error'

export interface ViewIo {
  stdout: Writable
  stderr: Writable & { columns?: number }
  color: boolean
}

/** Where the trainer's output, the monitor's messages and the status go, per output mode. */
export interface MonitorView {
  /** A raw chunk of the trainer's output. */
  raw(stream: 'stdout' | 'stderr', chunk: string): void
  /** A complete line of the trainer's output (progress-bar redraws folded to their last state). */
  line(stream: 'stdout' | 'stderr', line: string): void
  notify(level: Level, message: string): void
  update(state: ViewState): void
  close(): void
}

const COLORS: Record<Level, string> = { info: '\u001b[36m', warning: '\u001b[33m', error: '\u001b[31m' }
const RESET = '\u001b[0m'

/** The one place the monitor prints its messages: text from tools and files is shown escaped, never obeyed. */
function message(io: ViewIo, level: Level, text: string): string {
  const label = `rigfit: ${level === 'info' ? '' : `${level}: `}${printable(text)}`
  return io.color ? `${COLORS[level]}${label}${RESET}\n` : `${label}\n`
}

/** A terminal: the status block stays at the bottom and is redrawn in place; output scrolls above it. */
class LiveView implements MonitorView {
  private drawn = 0
  private lastState: ViewState | null = null
  private lastDraw = 0
  private closed = false

  constructor(
    private readonly io: ViewIo,
    private readonly clock: Clock,
  ) {}

  raw(): void {}

  line(stream: 'stdout' | 'stderr', line: string): void {
    this.erase()
    this.io[stream].write(`${line}\n`)
    this.draw()
  }

  notify(level: Level, text: string): void {
    this.erase()
    this.io.stderr.write(message(this.io, level, text))
    this.draw()
  }

  update(state: ViewState): void {
    this.lastState = state
    const now = this.clock.now()
    if (now - this.lastDraw < 100) return
    this.erase()
    this.draw()
  }

  /** Leaves the last status on screen; later messages print below it. */
  close(): void {
    this.erase()
    this.closed = true
    if (this.lastState !== null) this.io.stderr.write(`${renderStatusLines(this.lastState).join('\n')}\n`)
  }

  private erase(): void {
    if (this.drawn === 0) return
    this.io.stderr.write(`\u001b[${this.drawn}F\u001b[0J`)
    this.drawn = 0
  }

  private draw(): void {
    if (this.lastState === null || this.closed) return
    // A pseudo-terminal may report 0 columns; then COLUMNS or a common width stands in.
    const columns = this.io.stderr.columns
    const width = (columns !== undefined && columns >= 20 ? columns : Number(process.env.COLUMNS) || 120) - 1
    // Lines are cut to the terminal's width: a wrapped line would break the count used to redraw.
    const lines = renderStatusLines(this.lastState).map((line) =>
      line.length > width ? `${line.slice(0, width - 1)}…` : line,
    )
    const text = lines.join('\n')
    this.io.stderr.write(
      this.io.color && this.lastState.pausedBy.length > 0
        ? `${COLORS.warning}${text}${RESET}\n`
        : `${text}\n`,
    )
    this.drawn = lines.length
    this.lastDraw = this.clock.now()
  }
}

/** Pipes and log files: the trainer's output untouched, a status line every `statusSeconds`. */
class PlainView implements MonitorView {
  private lastLine = 0
  private lastState: ViewState | null = null
  private lastPrinted = ''

  constructor(
    private readonly io: ViewIo,
    private readonly statusSeconds: number,
    private readonly quiet: boolean,
    private readonly clock: Clock,
  ) {}

  raw(stream: 'stdout' | 'stderr', chunk: string): void {
    this.io[stream].write(chunk)
  }

  line(): void {}

  notify(level: Level, text: string): void {
    if (this.quiet && level === 'info') return
    this.io.stderr.write(message(this.io, level, text))
  }

  update(state: ViewState): void {
    this.lastState = state
    if (this.quiet) return
    const now = this.clock.now()
    if (now - this.lastLine < this.statusSeconds * 1000) return
    this.lastLine = now
    this.print(renderStatusLine(state))
  }

  /** The final figures, once, unless quiet. */
  close(): void {
    if (!this.quiet && this.lastState !== null) this.print(renderStatusLine(this.lastState))
  }

  private print(line: string): void {
    if (line === this.lastPrinted) return
    this.lastPrinted = line
    this.io.stderr.write(`${line}\n`)
  }
}

/** --json: stdout carries only records (written by the record sink); the trainer's output goes to stderr. */
class JsonView implements MonitorView {
  constructor(private readonly io: ViewIo) {}

  raw(_stream: 'stdout' | 'stderr', chunk: string): void {
    this.io.stderr.write(chunk)
  }

  line(): void {}
  notify(): void {}
  update(): void {}
  close(): void {}
}

export function createView(
  mode: ViewMode,
  io: ViewIo,
  statusSeconds: number,
  clock: Clock = systemClock,
): MonitorView {
  if (mode === 'live') return new LiveView(io, clock)
  if (mode === 'json') return new JsonView(io)
  return new PlainView(io, statusSeconds, mode === 'quiet', clock)
}
