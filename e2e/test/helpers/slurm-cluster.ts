import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, hostname, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { type Finished, freePort, run, Started, waitFor } from './processes.js'

const START_DEADLINE = 60_000

function idOf(flag: '-u' | '-g', name: string): number {
  const found = spawnSync('id', [flag, name], { encoding: 'utf8' })
  if (found.status !== 0)
    throw new Error(`no ${name} ${flag === '-u' ? 'user' : 'group'}: is munge installed?`)
  return Number(found.stdout.trim())
}

/**
 * A Slurm cluster on this machine, made for one test file and gone after it: munged with its own key and socket,
 * slurmctld, and one slurmd per node name. Several node names run as several slurmd on this host (Debian's
 * slurmd takes -N); their names must resolve to this machine, so they are the host name and `localhost`.
 */
export class SlurmCluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'rigfit-e2e-slurm-'))
  readonly conf = join(this.dir, 'slurm.conf')
  readonly nodes: string[]
  private readonly daemons: Started[] = []

  constructor(nodes: number) {
    const names = [hostname(), 'localhost'].filter((name, i, all) => all.indexOf(name) === i)
    if (nodes > names.length) throw new Error(`this host offers ${names.length} resolvable node name(s)`)
    this.nodes = names.slice(0, nodes)
  }

  get env(): NodeJS.ProcessEnv {
    return { ...process.env, SLURM_CONF: this.conf }
  }

  private daemon(command: string, args: string[]): Started {
    const started = new Started(command, args, { env: this.env })
    this.daemons.push(started)
    return started
  }

  private async startMunge(): Promise<string> {
    const munge = join(this.dir, 'munge')
    mkdirSync(munge)
    chmodSync(this.dir, 0o755) // munged checks every folder on the way to its socket
    const [uid, gid] = [idOf('-u', 'munge'), idOf('-g', 'munge')]
    const key = join(munge, 'munge.key')
    writeFileSync(key, randomBytes(1024), { mode: 0o400 })
    chownSync(munge, uid, gid)
    chownSync(key, uid, gid)
    chmodSync(munge, 0o755)
    const socket = join(munge, 'munge.sock')
    const files = [
      'key-file=munge.key',
      'log-file=munged.log',
      'pid-file=munged.pid',
      'seed-file=munged.seed',
    ]
    this.daemon('runuser', [
      ...['-u', 'munge', '--', 'munged', '--foreground', `--socket=${socket}`],
      ...files.map((f) => `--${f.replace('=', `=${munge}/`)}`),
    ])
    await waitFor(
      'munged answering',
      () => (spawnSync('munge', ['-n', '-S', socket]).status === 0 ? true : undefined),
      START_DEADLINE,
    )
    return socket
  }

  private writeConfig(socket: string, ports: number[]): void {
    const memory = Math.floor((totalmem() / 2 ** 20) * 0.9)
    const lines = [
      'ClusterName=rigfite2e',
      `SlurmctldHost=${this.nodes[0]}(127.0.0.1)`,
      `SlurmctldPort=${ports[0]}`,
      'AuthType=auth/munge',
      `AuthInfo=socket=${socket}`,
      'CredType=cred/munge',
      'ProctrackType=proctrack/linuxproc',
      'TaskPlugin=task/none',
      'SelectType=select/cons_tres',
      'SelectTypeParameters=CR_Core',
      'SlurmUser=root',
      'SlurmdUser=root',
      'ReturnToService=2',
      'JobCompType=jobcomp/none',
      'JobAcctGatherType=jobacct_gather/none',
      'AccountingStorageType=accounting_storage/none',
      'MpiDefault=none',
      `StateSaveLocation=${this.dir}/state`,
      `SlurmdSpoolDir=${this.dir}/spool/%n`,
      `SlurmctldPidFile=${this.dir}/slurmctld.pid`,
      `SlurmdPidFile=${this.dir}/slurmd-%n.pid`,
      `SlurmctldLogFile=${this.dir}/slurmctld.log`,
      `SlurmdLogFile=${this.dir}/slurmd-%n.log`,
      ...this.nodes.map(
        (name, i) =>
          `NodeName=${name} NodeAddr=127.0.0.1 Port=${ports[i + 1]} CPUs=${cpus().length} RealMemory=${memory} State=UNKNOWN`,
      ),
      `PartitionName=e2e Nodes=${this.nodes.join(',')} Default=YES MaxTime=INFINITE State=UP`,
    ]
    writeFileSync(this.conf, `${lines.join('\n')}\n`)
    // 22.05 has no CgroupPlugin=disabled; v1 with nothing constrained starts anywhere.
    const cgroup = [
      'CgroupPlugin=cgroup/v1',
      'CgroupAutomount=no',
      'ConstrainCores=no',
      'ConstrainRAMSpace=no',
    ]
    writeFileSync(join(this.dir, 'cgroup.conf'), `${cgroup.join('\n')}\n`)
    mkdirSync(join(this.dir, 'state'))
    for (const name of this.nodes) mkdirSync(join(this.dir, 'spool', name), { recursive: true })
  }

  async start(): Promise<void> {
    const socket = await this.startMunge()
    const ports = await Promise.all([0, ...this.nodes].map(() => freePort()))
    this.writeConfig(socket, ports)
    this.daemon('slurmctld', ['-D', '-f', this.conf])
    await waitFor(
      'slurmctld answering',
      async () => ((await this.scontrol(['ping'])).includes('UP') ? true : undefined),
      START_DEADLINE,
    )
    for (const name of this.nodes) this.daemon('slurmd', ['-D', '-N', name, '-f', this.conf])
    await waitFor(
      `${this.nodes.length} idle node(s)`,
      async () => {
        const states = (
          await run('sinfo', ['-h', '-N', '-o', '%N %t'], { env: this.env, deadlineMs: 30_000 })
        ).stdout
        const idle = states.split('\n').filter((line) => /\sidle$/.test(line.trim()))
        return idle.length === this.nodes.length ? true : undefined
      },
      START_DEADLINE,
    )
  }

  async scontrol(args: string[]): Promise<string> {
    const result = await run('scontrol', args, { env: this.env, deadlineMs: 30_000 })
    return `${result.stdout}${result.stderr}`
  }

  /** Submits a script from `cwd` (its submit dir); returns the job id. */
  async sbatch(cwd: string, env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
    const result = await run('sbatch', ['--parsable', ...args], {
      cwd,
      env: { ...env, SLURM_CONF: this.conf },
      deadlineMs: 30_000,
    })
    if (result.code !== 0)
      throw new Error(`sbatch ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`)
    return result.stdout.trim().split(';')[0] as string
  }

  /** Runs `command` inside a new allocation (`salloc ARGS command…`) from `cwd`, to its end or the deadline. */
  async salloc(cwd: string, env: NodeJS.ProcessEnv, args: string[], deadlineMs: number): Promise<Finished> {
    return run('salloc', args, { cwd, env: { ...env, SLURM_CONF: this.conf }, deadlineMs })
  }

  /** The jobs still queued or running in the cluster, as squeue prints them (empty when none). */
  async queue(): Promise<string> {
    const queue = await run('squeue', ['-h', '-o', '%i %j %T'], { env: this.env, deadlineMs: 30_000 })
    if (queue.code !== 0) throw new Error(`squeue failed: ${queue.stderr}`)
    return queue.stdout.trim()
  }

  /** Waits for the job to leave the queue; returns its final JobState and ExitCode. */
  async waitForJob(id: string, deadlineMs: number): Promise<{ state: string; exitCode: string }> {
    return waitFor(
      `job ${id} to end`,
      async () => {
        const shown = await this.scontrol(['show', 'job', id])
        const state = /JobState=(\w+)/.exec(shown)?.[1]
        if (!state || ['PENDING', 'CONFIGURING', 'RUNNING', 'COMPLETING'].includes(state)) return undefined
        return { state, exitCode: /\bExitCode=(\S+)/.exec(shown)?.[1] ?? '' }
      },
      deadlineMs,
    )
  }

  logs(): string {
    return this.nodes
      .map((n) => `slurmd-${n}.log`)
      .concat('slurmctld.log')
      .map((f) => {
        try {
          return `--- ${f}\n${readFileSync(join(this.dir, f), 'utf8').split('\n').slice(-20).join('\n')}`
        } catch {
          return `--- ${f}: none`
        }
      })
      .join('\n')
  }

  /** Cancels what is still queued or running (a test that failed half-way) and waits for the queue to empty. */
  private async cancelJobs(): Promise<void> {
    if (!this.daemons.some((d) => d.child.spawnfile === 'slurmctld')) return
    await run('scancel', ['--partition=e2e'], { env: this.env, deadlineMs: 30_000 })
    await waitFor(
      'the queue to empty',
      async () => {
        const queue = await run('squeue', ['-h', '-p', 'e2e'], { env: this.env, deadlineMs: 30_000 })
        return queue.code === 0 && queue.stdout.trim() === '' ? true : undefined
      },
      60_000,
    ).catch(() => undefined) // the daemons are stopped next either way
  }

  /** Ends the jobs, stops the daemons (slurmd first) and waits for each to exit; removes the cluster's folder. */
  async stop(): Promise<void> {
    await this.cancelJobs()
    for (const daemon of [...this.daemons].reverse()) {
      daemon.signalGroup('SIGTERM')
      await daemon.finish(30_000, daemon.child.spawnfile).catch(() => daemon.signalGroup('SIGKILL'))
    }
    rmSync(this.dir, { recursive: true, force: true })
  }
}
