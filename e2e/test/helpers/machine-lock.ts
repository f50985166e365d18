import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { waitFor } from './processes.js'

const LOCK = join(tmpdir(), 'rigfit-e2e-machine.lock')

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * How long a file waits for its turn. The other files' runs come first, each up to its own generous deadline, so
 * on a busy machine the wait is long; it ends as soon as the holder releases the lock (an event, not a sleep).
 */
export const MACHINE_TURN_MS = 3_000_000

/**
 * Holds the machine for one e2e file at a time. Each file trains real processes whose OpenMP threads take every
 * core; two files side by side make both many times slower, so they take turns (the unit tests still run beside).
 * Returns the release; a lock left by a process that died is taken over.
 */
export async function holdMachine(deadlineMs: number): Promise<() => void> {
  await waitFor(
    'a turn on the machine (another e2e test file holds it)',
    () => {
      try {
        mkdirSync(LOCK)
        writeFileSync(join(LOCK, 'pid'), String(process.pid))
        return true
      } catch {
        let holder = 0
        try {
          holder = Number(readFileSync(join(LOCK, 'pid'), 'utf8'))
        } catch {
          return undefined // just taken: its holder is writing its pid
        }
        if (holder > 0 && !alive(holder)) rmSync(LOCK, { recursive: true, force: true })
        return undefined
      }
    },
    deadlineMs,
  )
  return () => rmSync(LOCK, { recursive: true, force: true })
}
