/** Size limits for everything rigfit reads from a pack. A pack over a limit is refused, never truncated. */
export const PACK_LIMITS = {
  /** One rules/<id>.json file. */
  ruleFileBytes: 64 * 1024,
  /** pack.json. */
  manifestBytes: 16 * 1024,
  /** A whole pack in one file. */
  singleFileBytes: 1024 * 1024,
  /** All rule files of a directory pack together. */
  packBytes: 4 * 1024 * 1024,
  /** catalog.json, a fixture profile, a cases file. */
  dataFileBytes: 1024 * 1024,
  /** Nesting of any JSON document; conditions nest a few levels in practice. */
  depth: 32,
} as const
