/** Where progress goes: stderr in the CLI, any writable with `isTTY` in tests. */
export interface ProgressStream {
  write(text: string): unknown
  isTTY?: boolean | undefined
  columns?: number | undefined
}

export interface ProgressBarOptions {
  /** Printed before the bar, e.g. the file's name. */
  label?: string
  /** The clock, in milliseconds; injected by tests. */
  now?: () => number
  /** How often a plain (non-terminal) stream gets a line. */
  lineEveryMs?: number
}

export interface ProgressBar {
  /** Pass as `onProgress`. */
  update(bytesRead: number, totalBytes: number): void
  /** Ends the bar's line (terminal) or prints the last line (plain stream, when one was printed). */
  done(): void
}

const REDRAW_EVERY_MS = 100
const PLAIN_LINE_EVERY_MS = 5000
const BAR_CELLS = 30

/** Bytes as MiB below a GiB, else GiB, one decimal. */
export function sizeText(bytes: number): string {
  return bytes < 2 ** 30 ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : `${(bytes / 2 ** 30).toFixed(1)} GiB`
}

function percentOf(bytesRead: number, totalBytes: number): number {
  return totalBytes === 0 ? 100 : Math.min(100, Math.floor((bytesRead / totalBytes) * 100))
}

/** One drawing of the bar: `label [#######.......]  42%  1.2 of 2.9 GiB`. */
export function barLine(label: string, bytesRead: number, totalBytes: number, width = 80): string {
  const percent = percentOf(bytesRead, totalBytes)
  const filled = Math.round((percent / 100) * BAR_CELLS)
  const bar = `[${'#'.repeat(filled)}${'.'.repeat(BAR_CELLS - filled)}]`
  const line = `${label} ${bar} ${String(percent).padStart(3)}%  ${sizeText(bytesRead)} of ${sizeText(totalBytes)}`
  // Never wrap: a wrapped line cannot be redrawn in place with a carriage return.
  return line.length >= width ? line.slice(0, Math.max(0, width - 1)) : line
}

/**
 * Progress of a long count. On a terminal, one line redrawn in place at most ten times a second; on a plain
 * stream (a log file, CI), a line every few seconds so that the log shows it is alive without flooding it. The
 * caller decides whether to show progress at all (not under --json, not for a small file).
 */
export function progressBar(stream: ProgressStream, options: ProgressBarOptions = {}): ProgressBar {
  const label = options.label ?? 'counting tokens'
  const now = options.now ?? Date.now
  const tty = stream.isTTY === true
  const every = tty ? REDRAW_EVERY_MS : (options.lineEveryMs ?? PLAIN_LINE_EVERY_MS)
  const started = now()
  let lastDrawn: number | null = null
  let last: { bytesRead: number; totalBytes: number } | null = null

  const draw = (bytesRead: number, totalBytes: number): void => {
    if (tty) stream.write(`\r${barLine(label, bytesRead, totalBytes, stream.columns ?? 80)}\x1b[K`)
    else {
      stream.write(
        `${label}: ${percentOf(bytesRead, totalBytes)}% (${sizeText(bytesRead)} of ${sizeText(totalBytes)})\n`,
      )
    }
  }

  return {
    update(bytesRead, totalBytes) {
      last = { bytesRead, totalBytes }
      const time = now()
      // A plain stream waits a full period before its first line, so a quick count prints nothing.
      const due = lastDrawn === null ? time - started >= (tty ? 0 : every) : time - lastDrawn >= every
      if (!due) return
      lastDrawn = time
      draw(bytesRead, totalBytes)
    },
    done() {
      // Nothing was shown for a count that ended before the first drawing; keep it that way.
      if (lastDrawn === null || last === null) return
      draw(last.bytesRead, last.totalBytes)
      if (tty) stream.write('\n')
    },
  }
}
