/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The pages are read as documents, here and in the browser.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { MonitorRecord } from '@rigfit/core'
import { parseHTML } from 'linkedom'
import { type CliRun, rigfitAsync, rigfitJson } from './run-cli.js'
import { workspaceFixture } from './workspace-fixtures.js'

/** The what-if and hardware of the plans page the report tests write: two RTX 4090s, compared with two other GPUs. */
export const PLAN_FLAGS = ['--gpu', 'RTX 4090', '--gpus', '2', '--model', 'gpt2']
export const COMPARED = ['RTX 3060 12GB', 'A100 80GB']
export const ESTIMATE_FLAGS = [
  '--model',
  'llama-3.1-8b',
  '--seq',
  '2048',
  '--micro-batch',
  '1',
  '--lora-rank',
  '16',
  '--quant',
  'nf4',
  '--gpu',
  'RTX 4090',
]

export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'rigfit-report-'))
}

/** A document parsed from the written page, as a browser would build it (without running anything). */
export function readPage(path: string): Document {
  return parseHTML(readFileSync(path, 'utf8')).document as unknown as Document
}

/** The rows of the table whose caption is `caption` (inside the figure `figureId` when given), cell texts. */
export function tableRows(doc: Document, caption: string, figureId?: string): string[][] {
  const scope = figureId ? doc.getElementById(figureId) : doc
  if (!scope) throw new Error(`no figure ${figureId}`)
  const table = [...scope.querySelectorAll('table')].find(
    (t) => t.querySelector('caption')?.textContent === caption,
  )
  if (!table) throw new Error(`no table "${caption}"`)
  return [...table.querySelectorAll('tbody tr')].map((row) =>
    [...row.querySelectorAll('th, td')].map((cell) => (cell.textContent ?? '').trim()),
  )
}

/** GiB as the page writes them. */
export const gibCell = (bytes: number) => `${(bytes / 2 ** 30).toFixed(2)} GiB`

export interface MonitoredRun {
  result: CliRun
  logDir: string
  report: string
  records: MonitorRecord[]
  planFile: string
}

/**
 * A real `rigfit monitor --report` run of the monitor's scripted trainer under a real plan, with the fake nvidia-smi
 * of an RTX 4090 workstation on PATH (the OS boundary): the trainer runs out of memory at step 4 with the plan's
 * micro-batch, the monitor relaunches it with half, and the run completes.
 */
export async function monitoredRun(work: string): Promise<MonitoredRun> {
  const plan = rigfitJson(['plan', '--gpu', 'RTX 4090', '--model', 'gpt2'])
  const planFile = join(work, 'plan.json')
  writeFileSync(planFile, JSON.stringify(plan))
  const bin = workspaceFixture('@rigfit/monitor', 'bin')
  const sysfs = join(work, 'sysfs-empty')
  mkdirSync(sysfs)
  const env = {
    ...process.env,
    PATH: `${bin}:${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
    RIGFIT_FAKE_NVIDIA_SMI_SCENARIO: workspaceFixture(
      '@rigfit/monitor',
      'nvidia-smi',
      'workstation-rtx4090.json',
    ),
    RIGFIT_FAKE_GPU_STATE: join(work, 'gpu-state.json'),
    RIGFIT_SYSFS_ROOT: sysfs,
    NO_COLOR: '1',
  }
  const logDir = join(work, 'log')
  const report = join(work, 'run.html')
  const microBatch = plan.settings.microBatch as number
  const trainer = [
    join(bin, 'fake-trainer.mjs'),
    ...[
      '--steps',
      '12',
      '--step-ms',
      '120',
      '--checkpoint-dir',
      join(work, 'ckpt'),
      '--checkpoint-every',
      '2',
    ],
    ...['--oom-at-step', '4', '--oom-above-micro-batch', String(microBatch - 1)],
  ]
  const args = [
    'monitor',
    '--plan',
    planFile,
    '--interval-ms',
    '100',
    '--restart-delay',
    '0',
    '--grace-seconds',
    '0.5',
  ]
  const result = await rigfitAsync(
    [...args, '--quiet', '--log-dir', logDir, '--report', report, '--', process.execPath, ...trainer],
    work,
    env,
  )
  const records = readFileSync(join(logDir, 'monitor.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => MonitorRecord.parse(JSON.parse(line)))
  return { result, logDir, report, records, planFile }
}
