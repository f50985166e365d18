import { readFileSync } from 'node:fs'
import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A directory holding fake executables (POSIX shell scripts) to put first on PATH. */
export async function fakeBin(tools: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rigfit-fake-bin-'))
  for (const [name, body] of Object.entries(tools)) {
    const path = join(dir, name)
    await writeFile(path, `#!/bin/sh\n${body}\n`)
    await chmod(path, 0o755)
  }
  return dir
}

/** PATH with the fake tools first and only the system directories after (no real vendor tools, no lspci). */
export function pathWith(dir: string): NodeJS.ProcessEnv {
  return { ...process.env, PATH: `${dir}:/usr/bin:/bin` }
}

/** A fake nvidia-smi that answers each query from a machine's recorded outputs. */
export function nvidiaSmiReplaying(files: {
  csv: string
  computeCap?: string
  mig?: string
  topo?: string
  banner?: string
}): string {
  const cat = (path: string | undefined) => (path ? `cat '${path}'` : 'echo "[N/A]"')
  return [
    'case "$*" in',
    `  *compute_cap*) ${cat(files.computeCap)} ;;`,
    `  *mig.mode.current*) ${cat(files.mig)} ;;`,
    `  "topo -m") ${cat(files.topo)} ;;`,
    `  --query-gpu=*) ${cat(files.csv)} ;;`,
    `  "") ${cat(files.banner)} ;;`,
    '  *) echo "unknown arguments: $*" >&2; exit 2 ;;',
    'esac',
  ].join('\n')
}

/** Running, not a zombie: a killed process whose new parent (init) has not collected it yet is ended. */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2))
  } catch {
    return false
  }
}

/** The pids a fake tool wrote down, one a line, in `<dir>/pids`. */
export async function recordedPids(dir: string): Promise<number[]> {
  return (await readFile(join(dir, 'pids'), 'utf8')).trim().split('\n').map(Number)
}

/**
 * The pids still running once each has ended, or once a generous deadline passed: a signalled process ends as
 * soon as the machine gets to it, so a busy machine only makes this slower. The fake tools' helpers sleep far
 * longer than the deadline, so one that was never signalled is still a survivor when it passes.
 */
export async function survivorsOf(pids: number[], deadlineMs = 15_000): Promise<number[]> {
  const deadline = performance.now() + deadlineMs
  while (pids.some(isRunning) && performance.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20))
  return pids.filter(isRunning)
}
