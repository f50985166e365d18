import { expandHostlist } from './hostlist.js'

/**
 * The leaf switch of each node from `scontrol show topology` (topology/tree): the lines of level-0 switches,
 * `SwitchName=s0 Level=0 LinkSpeed=1 Nodes=node[01-16]`. Anything else (no topology plugin: "No topology
 * information available") gives an empty map.
 */
export function parseSlurmTopology(text: string): Map<string, string> {
  const leaves = new Map<string, string>()
  for (const line of text.split('\n')) {
    const fields = new Map(
      [...line.matchAll(/(\w+)=(\S*)/g)].map((match) => [match[1] as string, match[2] as string]),
    )
    const name = fields.get('SwitchName')
    const nodes = fields.get('Nodes')
    if (name === undefined || nodes === undefined || nodes === '' || fields.get('Level') !== '0') continue
    let names: string[]
    try {
      names = expandHostlist(nodes)
    } catch {
      continue // a line we cannot read names no node
    }
    for (const node of names) if (!leaves.has(node)) leaves.set(node, name)
  }
  return leaves
}
