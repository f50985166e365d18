/** How many messages of one kind a run tells before it only counts them. */
export const TOLD_PER_KIND = 5

/**
 * Counts messages by kind and lets the first few of each through: a tool printing garbage must not bury the
 * terminal and fill the log with a warning per line. What was held back is told once, as a count.
 */
export class RepeatLimit {
  private readonly counts = new Map<string, { seen: number; label: string }>()

  constructor(private readonly told = TOLD_PER_KIND) {}

  /** Counts one message of `kind` (described by `label`); true while it may still be told. */
  admit(kind: string, label: string): boolean {
    const entry = this.counts.get(kind) ?? { seen: 0, label }
    entry.seen += 1
    this.counts.set(kind, entry)
    return entry.seen <= this.told
  }

  /** One line per kind that was held back: "…and 23,299 more like it (label)"; each is told only once. */
  heldBack(): string[] {
    const out: string[] = []
    for (const [kind, entry] of this.counts) {
      if (entry.seen <= this.told) continue
      out.push(`…and ${(entry.seen - this.told).toLocaleString('en-US')} more like it (${entry.label})`)
      this.counts.delete(kind)
    }
    return out
  }
}
