import { rigfit } from './run-cli.js'

// biome-ignore lint/suspicious/noExplicitAny: plans and errors read back from the CLI's JSON output
export type Json = any

/** The JSON error of a command that refuses, with its exit code. */
export function refusal(args: string[]): { status: number | null; error: Json } {
  const run = rigfit([...args, '--json'])
  return { status: run.status, error: JSON.parse(run.stdout).error }
}

/** A command line as the shell splits it: words, and "quoted words" as one. */
export function argv(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => (m[1] ?? m[2]) as string)
}

/**
 * `base` with the flags of a printed alternative put in, as a user would type them: a flag it names replaces the
 * base's value, a new one is added, and "drop --flag value" takes that flag out.
 */
export function withFlags(base: string[], printed: string): string[] {
  const words = argv(printed)
  const out = [...base]
  const dropping = words[0] === 'drop'
  for (let i = dropping ? 1 : 0; i < words.length; i += 1) {
    const flag = words[i] as string
    const value = words[i + 1]?.startsWith('--') ? undefined : words[i + 1]
    if (value !== undefined) i += 1
    const at = out.indexOf(flag)
    if (dropping) {
      if (at >= 0) out.splice(at, value === undefined ? 1 : 2)
    } else if (at >= 0 && value !== undefined) out[at + 1] = value
    else out.push(flag, ...(value === undefined ? [] : [value]))
  }
  return out
}
