import { describe, expect, it } from 'vitest'
import { parseSlurmTopology } from '../../src/cluster/slurm-topology.js'

describe('parseSlurmTopology', () => {
  it('maps each node to its leaf switch from `scontrol show topology` (topology/tree)', () => {
    const text = [
      'SwitchName=s0 Level=0 LinkSpeed=1 Nodes=gpu[01-02]',
      'SwitchName=s1 Level=0 LinkSpeed=1 Nodes=gpu[03-04]',
      'SwitchName=spine Level=1 LinkSpeed=1 Nodes=gpu[01-04] Switches=s[0-1]',
    ].join('\n')
    const leaves = parseSlurmTopology(text)
    expect(Object.fromEntries(leaves)).toEqual({ gpu01: 's0', gpu02: 's0', gpu03: 's1', gpu04: 's1' })
    expect(new Set(leaves.values()).size).toBe(2)
  })

  it('gives no switches when Slurm has no topology plugin', () => {
    expect(parseSlurmTopology('No topology information available\n').size).toBe(0)
    expect(parseSlurmTopology('').size).toBe(0)
  })
})
