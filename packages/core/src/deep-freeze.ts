/**
 * Freezes an object and everything reachable from it. Loaded packs are shared by every decide() call and by
 * cached engines, and the rule tester freezes its inputs, so code that mutates them fails instead of leaking state.
 */
export function deepFreeze<T>(value: T): T {
  const seen = new WeakSet<object>()
  const stack: unknown[] = [value]
  while (stack.length > 0) {
    const current = stack.pop()
    if (current === null || typeof current !== 'object' || seen.has(current)) continue
    seen.add(current)
    Object.freeze(current)
    for (const key of Object.keys(current)) stack.push((current as Record<string, unknown>)[key])
  }
  return value
}
