import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** How a fake node answers `srun … rigfit profile --json`. */
export type NodeMode = 'run' | 'fixture' | 'missing' | 'garbage' | 'hang'

/** The sleep a hanging node runs: a number no other process uses, so a test can look for it. */
export const HANG_SECONDS = 3217

const SCRIPTS: Record<string, string> = {
  srun: `echo "srun $*" >> "$STATE/calls"
node=""
for a in "$@"; do case "$a" in --nodelist=*) node="\${a#--nodelist=}";; --job-name=*) step="\${a#--job-name=}";; --jobid=*) job="\${a#--jobid=}";; esac; done
while [ $# -gt 0 ]; do case "$1" in --*) shift;; *) break;; esac; done
mode=$(cat "$STATE/mode-$node" 2>/dev/null || echo run)
case "$mode" in
  run) exec "$@" ;;
  fixture) cat "$STATE/profile-$node.json" ;;
  missing) echo "slurmstepd: error: execve(): $1: No such file or directory" >&2
    echo "srun: error: $node: task 0: Exited with exit code 2" >&2; exit 2 ;;
  garbage) echo "Welcome to $node"; echo "{ not a profile" ;;
  hang) echo "$job.$node $step" >> "$STATE/steps"; exec sleep ${HANG_SECONDS} ;;
esac`,
  salloc: `echo "salloc $*" >> "$STATE/calls"
if [ -f "$STATE/deny" ]; then echo "salloc: error: Job submit/allocate failed: Invalid partition name specified" >&2; exit 1; fi
echo "salloc: Pending job allocation 77" >&2
echo "salloc: Granted job allocation 77" >&2
echo 77 >> "$STATE/jobs"`,
  scontrol: `echo "scontrol $*" >> "$STATE/calls"
case "$*" in
  "show topology") cat "$STATE/topology" 2>/dev/null || echo "No topology information available" ;;
  "show job"*) printf 'JobId=77 JobName=rigfit-profile\\n   Partition=debug AllocNode:Sid=login:1\\n   NodeList=%s BatchHost=a\\n' "$(cat "$STATE/nodelist")" ;;
esac`,
  scancel: `echo "scancel $*" >> "$STATE/calls"
for id in "$@"; do
  for f in jobs steps; do [ -f "$STATE/$f" ] && grep -v "^$id\\b" "$STATE/$f" > "$STATE/$f.new"; mv "$STATE/$f.new" "$STATE/$f" 2>/dev/null; done
done
true`,
  squeue: `echo "squeue $*" >> "$STATE/calls"
cat "$STATE/steps" 2>/dev/null; true`,
}

/**
 * Slurm's client commands as shell scripts on PATH, for fault injection: srun answers per node as told
 * (`mode-<node>`), salloc grants job 77 (or refuses), scancel and squeue keep a queue of jobs and steps in the
 * state folder, and every call is logged.
 */
export class FakeSlurm {
  readonly dir = mkdtempSync(join(tmpdir(), 'rigfit-fake-slurm-'))

  constructor(tools: string[] = Object.keys(SCRIPTS)) {
    writeFileSync(join(this.dir, 'calls'), '')
    for (const tool of tools) {
      const path = join(this.dir, tool)
      writeFileSync(path, `#!/bin/sh\nSTATE="${this.dir}"\n${SCRIPTS[tool]}\n`)
      chmodSync(path, 0o755)
    }
  }

  /** PATH with the fake tools first (they shadow an installed Slurm), then the utilities they use. */
  get path(): string {
    return `${this.dir}:/usr/bin:/bin`
  }

  node(name: string, mode: NodeMode, profile?: unknown): this {
    writeFileSync(join(this.dir, `mode-${name}`), mode)
    if (profile !== undefined) writeFileSync(join(this.dir, `profile-${name}.json`), JSON.stringify(profile))
    return this
  }

  file(name: string, text: string): this {
    writeFileSync(join(this.dir, name), text)
    return this
  }

  read(name: string): string {
    try {
      return readFileSync(join(this.dir, name), 'utf8')
    } catch {
      return ''
    }
  }

  calls(): string[] {
    return this.read('calls').split('\n').filter(Boolean)
  }
}
