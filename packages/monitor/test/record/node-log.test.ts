import { describe, expect, it } from 'vitest'
import { multiNodeName, nodeRunLogs, RUN_LOG_FILE, runLogFileName } from '../../src/record/node-log.js'

describe('one run log per node of a multi-node job', () => {
  it('names the node only inside a Slurm job of more than one node', () => {
    const job = { SLURM_JOB_ID: '7', SLURMD_NODENAME: 'gpu01' }
    expect(multiNodeName({ ...job, SLURM_JOB_NUM_NODES: '2' })).toBe('gpu01')
    expect(multiNodeName({ ...job, SLURM_NNODES: '4' })).toBe('gpu01')
    expect(multiNodeName({ ...job, SLURM_JOB_NUM_NODES: '1' })).toBeNull()
    expect(multiNodeName({ SLURM_JOB_NUM_NODES: '2', SLURMD_NODENAME: 'gpu01' })).toBeNull()
    expect(multiNodeName({})).toBeNull()
  })

  it('gives every node its own file and reads the nodes back from a folder (a sweep over names)', () => {
    expect(runLogFileName(null)).toBe(RUN_LOG_FILE)
    const nodes = ['gpu01', 'localhost', 'node-1.cluster', 'n1', 'a.1']
    const files = nodes.map(runLogFileName)
    expect(new Set(files).size).toBe(nodes.length)
    // Rotated copies and the one-machine log are not nodes.
    const folder = [...files, 'monitor-gpu01.1.jsonl', RUN_LOG_FILE, 'plan.attempt-1.json']
    expect(nodeRunLogs(folder).map((entry) => entry.node)).toEqual(
      [...nodes].sort((a, b) => a.localeCompare(b)),
    )
    expect(runLogFileName('../evil/x')).toBe('monitor-.._evil_x.jsonl')
  })
})
