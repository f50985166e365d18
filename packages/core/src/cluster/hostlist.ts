/** More names than any allocation holds: a larger expansion is a malformed list, not a cluster. */
const MAX_HOSTS = 100_000

/** Splits at commas outside brackets: `a[1-2,4],b` -> `a[1-2,4]`, `b`. */
function topLevelItems(text: string): string[] {
  const items: string[] = []
  let depth = 0
  let current = ''
  for (const char of text) {
    if (char === '[') depth += 1
    if (char === ']') depth -= 1
    if (depth < 0) throw new Error(`unbalanced ] in hostlist "${text}"`)
    if (char === ',' && depth === 0) {
      items.push(current)
      current = ''
    } else current += char
  }
  if (depth !== 0) throw new Error(`unbalanced [ in hostlist "${text}"`)
  items.push(current)
  return items.map((item) => item.trim()).filter((item) => item !== '')
}

/** `01-03,7` -> `01`, `02`, `03`, `7`: a range keeps the zero padding of its first bound. */
function expandRanges(ranges: string): string[] {
  const out: string[] = []
  for (const part of ranges.split(',')) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part.trim())
    if (!match) throw new Error(`"${part}" is not a number or a range`)
    const [, first = '', last] = match
    const from = Number(first)
    const to = last === undefined ? from : Number(last)
    if (to < from) throw new Error(`the range ${part} runs backwards`)
    if (out.length + to - from + 1 > MAX_HOSTS) throw new Error(`more than ${MAX_HOSTS} hosts`)
    for (let n = from; n <= to; n += 1) out.push(String(n).padStart(first.length, '0'))
  }
  return out
}

/** One item, with any number of bracket groups: `r[1-2]n[1-2]` -> r1n1, r1n2, r2n1, r2n2. */
function expandItem(item: string): string[] {
  const match = /^([^[]*)\[([^\]]*)\](.*)$/.exec(item)
  if (!match) return [item]
  const [, prefix = '', ranges = '', rest = ''] = match
  const tails = expandItem(rest)
  const names: string[] = []
  for (const middle of expandRanges(ranges)) {
    for (const tail of tails) names.push(`${prefix}${middle}${tail}`)
    if (names.length > MAX_HOSTS) throw new Error(`more than ${MAX_HOSTS} hosts`)
  }
  return names
}

/**
 * The node names of a Slurm hostlist expression (`SLURM_JOB_NODELIST`, `scontrol show topology`'s `Nodes=`),
 * in its order: `gpu[01-02,05],login` -> gpu01, gpu02, gpu05, login. Throws on a malformed list.
 */
export function expandHostlist(text: string): string[] {
  const names = topLevelItems(text.trim()).flatMap(expandItem)
  return names.filter((name, index) => names.indexOf(name) === index)
}
