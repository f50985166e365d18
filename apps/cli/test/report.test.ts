import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { MODES, type MonitorRecord, type TrainingPlan } from '@rigfit/core'
import { beforeAll, describe, expect, it } from 'vitest'
import {
  COMPARED,
  ESTIMATE_FLAGS,
  gibCell,
  type MonitoredRun,
  monitoredRun,
  PLAN_FLAGS,
  readPage,
  tableRows,
  tempDir,
} from './helpers/report-pages.js'
import { rigfit, rigfitJson } from './helpers/run-cli.js'

const grouped = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })

describe('rigfit report: plans', () => {
  for (const hardware of [
    PLAN_FLAGS,
    ['--gpu', 'RTX 3060 12GB', '--model', 'gpt2'],
    ['--gpu', 'A100 80GB'],
  ]) {
    it(`shows the numbers of \`rigfit plan --json\` for every mode (${hardware.join(' ')})`, () => {
      const out = join(tempDir(), 'plans.html')
      const written = rigfitJson(['report', ...hardware, '--out', out])
      expect(written).toMatchObject({ written: out, kinds: ['plans'] })
      const doc = readPage(out)
      const plans = Object.fromEntries(
        MODES.map((mode) => [mode, rigfitJson(['plan', ...hardware, '--mode', mode]) as TrainingPlan]),
      )
      const memory = tableRows(doc, 'Per-device memory in GiB', 'plans-memory')
      expect(memory.map((row) => row[0])).toEqual([...MODES])
      for (const row of memory) {
        const plan = plans[row[0] as string] as TrainingPlan
        const m = plan.memory.perDevice
        expect(row.slice(1)).toEqual([
          ...[m.weights, m.gradients, m.optimizer, m.activations, m.logits, m.other].map(gibCell),
          gibCell(Math.max(0, m.reserved - m.peakAllocated)),
          gibCell(m.cudaContext),
          gibCell(m.communication),
          gibCell(m.peakAllocated),
          gibCell(m.reserved),
          gibCell(m.total),
          gibCell(plan.memory.capacityBytes * plan.memory.budgetFraction),
          gibCell(plan.memory.capacityBytes),
        ])
      }
      const speed = tableRows(doc, 'Training speed', 'plans-tokens')
      expect(speed).toEqual(
        MODES.map((mode) => [mode, grouped((plans[mode] as TrainingPlan).throughput.tokensPerSecond)]),
      )
      // Every setting of every plan links to an explanation naming the rule and pack that decided it.
      for (const mode of MODES) {
        for (const entry of (plans[mode] as TrainingPlan).trace) {
          const link = doc.querySelector(`a[href="#why-${mode}-${entry.setting.toLowerCase()}"]`)
          expect(link, `${mode} ${entry.setting}`).not.toBeNull()
          const target = doc.getElementById(`why-${mode}-${entry.setting.toLowerCase()}`)
          expect(target?.textContent).toContain(`${entry.pack}/${entry.rule}`)
        }
      }
      expect(doc.querySelector('#machine')?.textContent).toMatch(/Performance score: [\d.]+\/10/)
    })
  }

  it('charts time per GPU for --compare, sorted, with the plans of each GPU', () => {
    const out = join(tempDir(), 'what-if.html')
    rigfitJson([
      'report',
      '--mode',
      'balanced',
      ...PLAN_FLAGS,
      ...COMPARED.flatMap((gpu) => ['--compare', gpu]),
      '--out',
      out,
    ])
    const rows = tableRows(readPage(out), 'Time to train, by hardware', 'what-if-time')
    expect(rows).toHaveLength(COMPARED.length)
    const hours = COMPARED.map((gpu) => {
      const plan = rigfitJson([
        'plan',
        '--mode',
        'balanced',
        '--gpu',
        gpu,
        '--gpus',
        '2',
        '--model',
        'gpt2',
      ]) as TrainingPlan
      return plan.time.totalHours
    })
    expect(rows.map((row) => row[1])).toEqual(
      [...hours]
        .sort((a, b) => a - b)
        .map((h) => (h < 48 ? `${grouped(h, 2)} h` : `${grouped(h / 24, 2)} days`)),
    )
  })

  it('reads plans from --plan files', () => {
    const dir = tempDir()
    const file = join(dir, 'extreme.json')
    writeFileSync(file, rigfit(['plan', ...PLAN_FLAGS, '--mode', 'extreme', '--json']).stdout)
    const out = join(dir, 'r.html')
    rigfitJson(['report', '--plan', file, '--out', out])
    const rows = tableRows(readPage(out), 'Per-device memory in GiB', 'plans-memory')
    expect(rows.map((row) => row[0])).toEqual(['extreme'])
  })
})

describe('rigfit estimate --report', () => {
  it('writes the breakdown of `estimate --json` and the sweeps up to out of memory', () => {
    const out = join(tempDir(), 'estimate.html')
    const result = rigfitJson(['estimate', ...ESTIMATE_FLAGS, '--report', out])
    const doc = readPage(out)
    const memory = tableRows(doc, 'Per-device memory in GiB', 'estimate-memory')
    expect(memory[0]?.at(-3)).toBe(gibCell(result.perDevice.total))
    expect(memory[0]?.at(-1)).toBe(gibCell(result.capacity))
    for (const [id, current] of [
      ['estimate-micro-batch', '1'],
      ['estimate-seq', '2048'],
    ] as const) {
      const sweep = tableRows(
        doc,
        id === 'estimate-seq' ? 'Memory vs sequence length' : 'Memory vs micro-batch',
        id,
      )
      // Ascending, the estimated point is the one `estimate --json` printed, and memory grows with the setting.
      expect(sweep.find((row) => row[0] === current)?.[1]).toBe(gibCell(result.perDevice.total))
      const gib = sweep.map((row) => Number.parseFloat(row[1] as string))
      expect(gib).toEqual([...gib].sort((a, b) => a - b))
      // Every point but the last fits; the micro-batch sweep goes on until one does not.
      expect(sweep.slice(0, -1).every((row) => row[2] === 'yes')).toBe(true)
      if (id === 'estimate-micro-batch') expect(sweep.at(-1)?.[2]).toBe('no')
    }
  })

  it('rigfit report --estimate shows a saved estimate', () => {
    const dir = tempDir()
    const file = join(dir, 'estimate.json')
    writeFileSync(file, rigfit(['estimate', ...ESTIMATE_FLAGS, '--json']).stdout)
    const out = join(dir, 'r.html')
    expect(rigfitJson(['report', '--estimate', file, '--out', out]).kinds).toEqual(['estimate'])
    const total = JSON.parse(readFileSync(file, 'utf8')).perDevice.total
    expect(tableRows(readPage(out), 'Per-device memory in GiB', 'estimate-memory')[0]?.at(-3)).toBe(
      gibCell(total),
    )
  })
})

describe('rigfit report: bad input leaves nothing written', () => {
  const cases: [string, (dir: string) => string[], number, RegExp][] = [
    ['a missing --plan', (dir) => ['--plan', join(dir, 'nope.json')], 3, /E_PLAN_READ.*nope\.json/],
    [
      'an invalid --plan',
      (dir) => ['--plan', write(join(dir, 'bad.json'), '{"mode": "balanced"}')],
      4,
      /E_PLAN_INVALID.*bad\.json/,
    ],
    [
      'a --run folder without monitor.jsonl',
      (dir) => ['--run', dir],
      3,
      /E_RUN_NO_LOG.*has no monitor\.jsonl/,
    ],
    [
      'a --run log that is not one',
      (dir) => ['--run', write(join(dir, 'monitor.jsonl'), '{"type":"start"}\n', true)],
      4,
      /E_RUN_LOG_INVALID.*line 1/,
    ],
    [
      'a broken --estimate',
      (dir) => ['--estimate', write(join(dir, 'e.json'), 'not json')],
      3,
      /E_ESTIMATE_JSON.*e\.json/,
    ],
  ]
  for (const [what, args, code, message] of cases) {
    it(`${what}: exit ${code}, a message naming it, a suggestion`, () => {
      const dir = tempDir()
      const out = join(dir, 'r.html')
      const result = rigfit(['report', ...args(dir), '--out', out])
      expect(result.status, result.stderr).toBe(code)
      expect(result.stderr).toMatch(message)
      expect(result.stderr).toMatch(/Suggestion: /)
      expect(existsSync(out)).toBe(false)
    })
  }

  it('refuses an existing --out without --force and replaces it with --force', () => {
    const dir = tempDir()
    const out = write(join(dir, 'r.html'), 'mine')
    const refused = rigfit(['report', '--gpu', 'RTX 4090', '--out', out])
    expect(refused.status).toBe(8)
    expect(refused.stderr).toMatch(/E_EXISTS.*r\.html already exists[\s\S]*--force/)
    expect(readFileSync(out, 'utf8')).toBe('mine')
    expect(rigfit(['report', '--gpu', 'RTX 4090', '--out', out, '--force']).status).toBe(0)
    expect(readFileSync(out, 'utf8')).toMatch(/^<!doctype html>/)
  })
})

function write(path: string, text: string, folder = false): string {
  writeFileSync(path, text)
  return folder ? join(path, '..') : path
}

const ofType = <T extends MonitorRecord['type']>(records: MonitorRecord[], type: T) =>
  records.filter((r): r is Extract<MonitorRecord, { type: T }> => r.type === type)

describe('rigfit monitor --report', () => {
  let run: MonitoredRun
  beforeAll(async () => {
    run = await monitoredRun(tempDir())
  }, 180_000)

  it('writes the run page when the run ends: every reading and event of monitor.jsonl, the summary', () => {
    expect(run.result.status, run.result.stderr).toBe(0)
    expect(run.result.stderr).toContain(`Report written to ${run.report}`)
    const doc = readPage(run.report)
    const metrics = ofType(run.records, 'metrics')
    const loss = tableRows(doc, 'Training loss', 'run-loss')
    expect(loss.map((row) => Number(row[2]))).toEqual(
      metrics.filter((m) => m.loss !== null).map((m) => Number((m.loss as number).toFixed(4))),
    )
    // Speed: the trainer's reports beside the plan's tokens/s at the same times.
    const planned = ofType(run.records, 'start')[0]?.plannedTokensPerSecond as number
    expect(planned).toBeGreaterThan(0)
    const reported = metrics.filter((m) => m.tokensPerSecond !== null)
    expect(reported.length).toBeGreaterThan(0)
    const speed = tableRows(doc, 'Training speed against the plan', 'run-tokens')
    expect(speed.filter((row) => row[1] === 'measured').map((row) => Number(row[2]))).toEqual(
      reported.map((m) => Number((m.tokensPerSecond as number).toFixed(1))),
    )
    expect(speed.filter((row) => row[1] === 'planned').map((row) => Number(row[2]))).toEqual(
      reported.map(() => Number(planned.toFixed(1))),
    )
    const samples = ofType(run.records, 'sample').flatMap((s) => s.gpus)
    const memory = tableRows(doc, 'GPU memory against the plan', 'run-memory')
    expect(memory.filter((row) => row[1] === 'GPU 0 used')).toHaveLength(
      samples.filter((g) => g.memoryUsedBytes !== null).length,
    )
    const predicted = memory.filter((row) => row[1] === 'GPU 0 predicted').map((row) => Number(row[2]))
    expect(predicted).toEqual(
      samples
        .filter((g) => g.predictedBytes !== null)
        .map((g) => Number(((g.predictedBytes as number) / 2 ** 30).toFixed(3))),
    )
    // The events: what the monitor detected, what it did, and the relaunch with half the micro-batch.
    const events = tableRows(doc, 'Events of the run', 'run-events')
    const expected = [
      ...ofType(run.records, 'detection').map((d) => d.cause),
      ...ofType(run.records, 'action')
        .filter((a) => a.action !== 'skipped')
        .map((a) => `${a.action} (${a.cause})`),
      ...ofType(run.records, 'launch')
        .filter((l) => l.attempt > 1)
        .map(() => 'relaunch'),
    ]
    expect(events.map((row) => row[1]).sort()).toEqual(expected.sort())
    expect(events.map((row) => row[1])).toContain('gpu-oom')
    const relaunch = ofType(run.records, 'launch')[1]
    expect(events.find((row) => row[1] === 'relaunch')?.[2]).toContain(
      `micro-batch ${relaunch?.settings?.microBatch} ×`,
    )
    const summary = ofType(run.records, 'summary')[0]
    const facts = Object.fromEntries(tableRows(doc, 'Summary of the run'))
    expect(facts).toMatchObject({
      Outcome: summary?.outcome,
      Attempts: String(summary?.attempts),
      'Exit code': '0',
    })
  })

  it('rigfit report --run writes the same run from its folder', () => {
    const out = join(tempDir(), 'run.html')
    expect(rigfitJson(['report', '--plan', run.planFile, '--run', run.logDir, '--out', out]).kinds).toEqual([
      'plans',
      'run',
    ])
    const again = tableRows(readPage(out), 'Events of the run', 'run-events')
    expect(again).toEqual(tableRows(readPage(run.report), 'Events of the run', 'run-events'))
  })
})
