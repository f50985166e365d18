/**
 * The trainer's watchdog: a small process of its own, started beside each trainer, that ends the trainer's tree
 * when the monitor dies without ending it (SIGKILL, a crash, the OOM killer). It needs no parent-death signal,
 * which macOS lacks: its stdin is a pipe from the monitor, and the kernel closes that pipe when the monitor
 * dies, however it dies. The monitor writes `done` before closing it on a normal end; an end of input without
 * `done` means the monitor is gone. Arguments: the trainer's process group and the run's marker variable.
 *
 * Run as `node watchdog.js <pgid> <NAME=value>`; it imports only what Node has.
 */
import { readdirSync, readFileSync } from 'node:fs'

const [pgidText, marker] = process.argv.slice(2)
const pgid = Number(pgidText)
const GRACE_MS = 3000

function signalGroup(signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal)
  } catch {
    // the group is gone
  }
}

/** On Linux, the processes carrying the run's marker: the trainer's children that left its group (setsid). */
function signalMarked(signal: NodeJS.Signals): void {
  if (process.platform !== 'linux' || marker === undefined) return
  let entries: string[]
  try {
    entries = readdirSync('/proc')
  } catch {
    return
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (!readFileSync(`/proc/${entry}/environ`, 'latin1').includes(`${marker}\u0000`)) continue
      process.kill(Number(entry), signal)
    } catch {
      // gone, or not ours
    }
  }
}

function endTree(): void {
  signalGroup('SIGTERM')
  signalGroup('SIGCONT')
  signalMarked('SIGTERM')
  setTimeout(() => {
    signalGroup('SIGKILL')
    signalMarked('SIGKILL')
    process.exit(0)
  }, GRACE_MS)
}

if (Number.isInteger(pgid) && pgid > 1) {
  let input = ''
  let ended = false
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', (chunk: string) => {
    input += chunk
    if (input.includes('done')) {
      ended = true
      process.exit(0)
    }
  })
  process.stdin.on('end', () => {
    if (!ended) endTree()
  })
  process.stdin.on('error', () => {
    if (!ended) endTree()
  })
  // Neither the terminal's Ctrl-C nor a hang-up is for it: only the monitor's end ends it.
  process.on('SIGINT', () => {})
  process.on('SIGHUP', () => {})
}
