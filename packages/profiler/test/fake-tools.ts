import { chmod, mkdtemp, writeFile } from 'node:fs/promises'
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
