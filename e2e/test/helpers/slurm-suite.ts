import { afterAll, beforeAll } from 'vitest'
import { assertEngines, missingEngines, onPath } from './engines.js'
import { holdMachine, MACHINE_TURN_MS } from './machine-lock.js'
import { processesNaming } from './processes.js'
import { SlurmCluster } from './slurm-cluster.js'

/** What a Slurm test file needs that is missing: torch, torchrun, Slurm's clients and daemons, munge, root. */
export function missingSlurmEngines(file: string, python: string | undefined): string[] {
  return missingEngines(file, [
    { name: 'python3 with torch (python3-torch)', present: python !== undefined },
    { name: 'torchrun', present: onPath('torchrun') !== undefined },
    ...['salloc', 'sbatch', 'srun', 'slurmctld', 'slurmd', 'munged', 'runuser'].map((tool) => ({
      name: tool,
      present: onPath(tool) !== undefined,
    })),
    { name: 'root (slurmd and munged run as root and munge)', present: process.getuid?.() === 0 },
  ])
}

/**
 * A Slurm cluster of `nodes` node daemons for the tests of one describe block: started once the machine is this
 * file's (see holdMachine), stopped after its tests, daemons and jobs included, and checked to have left no process.
 */
export function slurmClusterForSuite(nodes: number, missing: string[]): SlurmCluster {
  const cluster = new SlurmCluster(nodes)
  let release: (() => void) | undefined
  beforeAll(async () => {
    assertEngines(missing)
    release = await holdMachine(MACHINE_TURN_MS)
    await cluster.start()
  }, MACHINE_TURN_MS + 100_000)
  afterAll(async () => {
    await cluster.stop()
    release?.()
    // Stopping the cluster ended its daemons: none of them is left running.
    const left = processesNaming(cluster.conf)
    if (left.length > 0) throw new Error(`Slurm processes left running:\n${left.join('\n')}`)
  }, 120_000)
  return cluster
}
