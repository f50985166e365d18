import { randomUUID } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'

/**
 * Finding and ending every process a probed tool started. A process group is not enough: a tool's helper may
 * `setsid` into a group of its own, and once the tool exits its children are re-parented to init, so the
 * parent links lead nowhere. Each tool therefore runs with a marker variable of its own in its environment,
 * which its descendants inherit; on Linux, /proc tells which living processes carry it. (The same idea as
 * Jenkins' process tree killer.) Elsewhere only the process group can be ended.
 */

/** The environment variable that marks one tool run and every process it starts. */
export const MARKER_VARIABLE = 'RIGFIT_PROBE_RUN'

export function newMarker(): string {
  return `${process.pid}-${randomUUID()}`
}

interface ProcStat {
  pid: number
  ppid: number
  /** Z (zombie) and X (dead) are already ended; they only wait for their parent to read their status. */
  state: string
  /** Clock ticks after boot when the process started. */
  startTicks: number
}

const procAvailable = process.platform === 'linux' && readStat(process.pid) !== null
/** Processes older than this one cannot be a probed tool's: their environments need not be read. */
const selfStartTicks = procAvailable ? (readStat(process.pid) as ProcStat).startTicks : 0

function readStat(pid: number): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name may hold spaces and parentheses; the fixed fields start after its last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    return { pid, state: fields[0] ?? '', ppid: Number(fields[1]), startTicks: Number(fields[19]) }
  } catch {
    return null
  }
}

function carriesMarker(pid: number, marker: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').includes(`${MARKER_VARIABLE}=${marker}\u0000`)
  } catch {
    return false
  }
}

/**
 * The processes a tool started, remembered while it lives: pid → start time. A child that clears its
 * environment (`env -i`) and leaves the group and session (setsid) carries no marker and, once the tool exited,
 * no parent link to it; remembering it while the link still exists is what finds it at the end.
 */
export type RememberedProcesses = Map<number, number>

/** Adds the tool's current descendants (by parent links from `root`) to `into`. */
export function rememberDescendants(root: number | undefined, into: RememberedProcesses): void {
  if (!procAvailable || root === undefined) return
  for (const pid of toolProcesses(root, null)) {
    const stat = readStat(pid)
    if (stat !== null) into.set(pid, stat.startTicks)
  }
}

/** The remembered processes still alive as the same process (not a reused pid). */
function stillRemembered(remembered: RememberedProcesses | undefined): number[] {
  const out: number[] = []
  for (const [pid, startTicks] of remembered ?? []) {
    const stat = readStat(pid)
    if (stat !== null && stat.startTicks === startTicks && stat.state !== 'Z' && stat.state !== 'X')
      out.push(pid)
  }
  return out
}

/** Living processes started by the tool run: descendants of `root` by parent links, and carriers of the marker. */
function toolProcesses(root: number | undefined, marker: string | null): number[] {
  const stats: ProcStat[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    const stat = readStat(Number(name))
    if (stat && stat.startTicks >= selfStartTicks) stats.push(stat)
  }
  const found = new Set<number>()
  if (root !== undefined) {
    const children = new Map<number, number[]>()
    for (const stat of stats) {
      const siblings = children.get(stat.ppid)
      if (siblings) siblings.push(stat.pid)
      else children.set(stat.ppid, [stat.pid])
    }
    const queue = [root]
    while (queue.length > 0) {
      for (const child of children.get(queue.pop() as number) ?? []) {
        if (found.has(child)) continue
        found.add(child)
        queue.push(child)
      }
    }
  }
  if (marker !== null)
    for (const stat of stats) if (!found.has(stat.pid) && carriesMarker(stat.pid, marker)) found.add(stat.pid)
  const ended = new Set(
    stats.filter((stat) => stat.state === 'Z' || stat.state === 'X').map((stat) => stat.pid),
  )
  return [...found].filter((pid) => !ended.has(pid))
}

function kill(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal)
  } catch {
    // already gone, or not ours
  }
}

/**
 * Ends the tool run's process group and, on Linux, every process found by parent links from `root` (pass it
 * only while the tool itself is alive) or by the marker. Scans again while a scan finds processes not seen
 * before, since one may fork between a scan and the kill. Synchronous, so that nothing started by the tool
 * is left running when the caller goes on.
 */
export function endToolProcesses(
  groupLeader: number | undefined,
  root: number | undefined,
  marker: string,
  remembered?: RememberedProcesses,
): void {
  signalToolProcesses(groupLeader, root, marker, 'SIGKILL', remembered)
}

/** Sends `signal` to the tool run's group and to every process of it found as endToolProcesses finds them. */
export function signalToolProcesses(
  groupLeader: number | undefined,
  root: number | undefined,
  marker: string,
  signal: NodeJS.Signals,
  remembered?: RememberedProcesses,
): void {
  if (groupLeader !== undefined) kill(-groupLeader, signal)
  if (!procAvailable) return
  const signalled = new Set<number>()
  for (const pid of stillRemembered(remembered)) {
    kill(pid, signal)
    signalled.add(pid)
  }
  for (let round = 0; round < 5; round += 1) {
    const fresh = toolProcesses(root, marker).filter((pid) => !signalled.has(pid))
    if (fresh.length === 0) return
    for (const pid of fresh) {
      kill(pid, signal)
      signalled.add(pid)
    }
  }
}

/** How often a running tool's descendants are remembered (see RememberedProcesses). */
const REMEMBER_EVERY_MS = 100

/**
 * The processes of one tool run: its marker, its process group (the leader's pid) and the descendants
 * remembered while it runs. Every signal goes to all three.
 */
export class ToolProcesses {
  readonly marker = newMarker()
  private readonly remembered: RememberedProcesses = new Map()
  private leader: number | undefined
  private leaderAlive = false
  private poll: NodeJS.Timeout | undefined

  /** Starts remembering the descendants of the leader, now running. */
  watch(leader: number | undefined): void {
    if (leader === undefined) return
    this.leader = leader
    this.leaderAlive = true
    if (!procAvailable) return
    this.poll = setInterval(() => rememberDescendants(leader, this.remembered), REMEMBER_EVERY_MS)
    this.poll.unref()
  }

  /** The leader exited: its children are re-parented, only the marker and what was remembered lead to them. */
  leaderExited(): void {
    this.leaderAlive = false
    clearInterval(this.poll)
  }

  signal(signal: NodeJS.Signals): void {
    if (this.leaderAlive) rememberDescendants(this.leader, this.remembered)
    signalToolProcesses(
      this.leader,
      this.leaderAlive ? this.leader : undefined,
      this.marker,
      signal,
      this.remembered,
    )
  }

  /** SIGKILL to everything of the run (see endToolProcesses). */
  end(): void {
    this.signal('SIGKILL')
  }
}
