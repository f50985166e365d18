import { describe, expect, it } from 'vitest'
import {
  clusterDifferences,
  describeNodeDevices,
  mixedGpuKinds,
  weakestNodeIndex,
} from '../../src/cluster/cluster-nodes.js'
import { selectTrainingDevices } from '../../src/plan/training-devices.js'
import { MACHINES, machine } from '../helpers/machines.js'

describe('the nodes of a cluster', () => {
  it('the weakest node has the least device memory of every pair of recorded machines (a sweep)', () => {
    for (const a of MACHINES)
      for (const b of MACHINES) {
        const weakest = weakestNodeIndex([a.profile, b.profile])
        const [ca, cb] = [a.profile, b.profile].map((p) => selectTrainingDevices(p).capacityBytes) as [
          number,
          number,
        ]
        expect(weakest === 0 ? ca <= cb : cb <= ca, `${a.name} / ${b.name}`).toBe(true)
      }
  })

  it('names every field two different nodes differ in, with each node value', () => {
    const differences = clusterDifferences([
      { name: 'n1', profile: machine('desktop-rtx4090') },
      { name: 'n2', profile: machine('server-a100-40gb') },
    ])
    const devices = differences.find((d) => d.field === 'training devices')
    expect(devices?.values).toEqual({
      n1: describeNodeDevices(machine('desktop-rtx4090')),
      n2: describeNodeDevices(machine('server-a100-40gb')),
    })
    expect(
      clusterDifferences([
        { name: 'n1', profile: machine('desktop-rtx4090') },
        { name: 'n2', profile: machine('desktop-rtx4090') },
      ]),
    ).toEqual([])
  })

  it('finds GPU models mixed inside one node', () => {
    const a100 = machine('server-a100-40gb')
    const rtx = machine('desktop-rtx4090')
    const mixed = { ...a100, gpus: [...a100.gpus, { ...(rtx.gpus[0] as (typeof rtx.gpus)[0]), index: 1 }] }
    expect(mixedGpuKinds(mixed)).toEqual([a100.gpus[0]?.name, rtx.gpus[0]?.name])
    expect(mixedGpuKinds(a100)).toEqual([])
  })
})
