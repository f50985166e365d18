/** Edit distance between two short strings (ids, names); small inputs only, so a plain two-row table. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      )
    }
    previous = current
  }
  return previous[b.length] as number
}

/**
 * The candidates closest to what a user typed, best first: those containing it (or contained in it) come
 * before those a few edits away. Used for "did you mean" suggestions.
 */
export function closeMatches(query: string, candidates: readonly string[], limit = 5): string[] {
  const q = query.trim().toLowerCase()
  const scored: { candidate: string; score: number }[] = []
  for (const candidate of candidates) {
    const c = candidate.toLowerCase()
    const distance = editDistance(q, c)
    const contains = q.length >= 2 && (c.includes(q) || q.includes(c))
    const score = contains ? distance / 10 : distance
    if (contains || distance <= Math.max(2, Math.floor(q.length / 3))) scored.push({ candidate, score })
  }
  return scored
    .sort((x, y) => x.score - y.score || x.candidate.localeCompare(y.candidate))
    .slice(0, limit)
    .map((s) => s.candidate)
}
