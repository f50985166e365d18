import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BoundedLines, MonitorGpuReading } from '@rigfit/core'
import { describeFuzzTargets, type FuzzTarget, mutatedText } from '@rigfit/fuzz-kit'
import { parseNvidiaSmiCsv } from '@rigfit/profiler'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { parseTrainingLine } from '../../src/metrics/parse-training-line.js'
import { OutputLines } from '../../src/process/output-lines.js'
import { MONITOR_NVIDIA_FIELDS, nvidiaRowToReading } from '../../src/sampling/nvidia-smi-stream.js'

/**
 * The monitor's stream parsers fed mutated recorded streams and long lines without a break: the nvidia-smi
 * stream (bounded lines, then the CSV rows read as GPU readings) and the trainer's output (lines and progress
 * segments, then the training metrics read from them). No crash, no line held beyond its bound, and every
 * reading and metric in range.
 */
const fixtures = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures')
const MAX_LINE = 4096
const CHUNK = 97

function seedsIn(dir: string, ext: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith(ext))
    .sort()
    .map((name) => readFileSync(join(dir, name), 'utf8'))
}

/** Mutated streams, and streams whose one line repeats to tens of thousands of characters with no break. */
function streams(seeds: string[]): fc.Arbitrary<string> {
  const lines = seeds.flatMap((seed) => seed.split('\n')).filter((line) => line !== '')
  const long = fc
    .tuple(fc.constantFrom(...lines), fc.integer({ min: 1000, max: 60_000 }))
    .map(([line, length]) => line.repeat(Math.ceil(length / line.length)))
  return fc.oneof({ arbitrary: mutatedText(seeds), weight: 4 }, { arbitrary: long, weight: 1 })
}

function chunks(text: string): string[] {
  const out: string[] = []
  for (let at = 0; at < text.length; at += CHUNK) out.push(text.slice(at, at + CHUNK))
  return out
}

const nvidiaSeeds = [
  ...seedsIn(join(fixtures, 'nvidia-smi'), '.csv'),
  ...seedsIn(join(fixtures, 'nvidia-smi'), '.json').flatMap((text) =>
    JSON.stringify(JSON.parse(text))
      .split('","')
      .filter((part) => part.includes(', ')),
  ),
]

const nvidiaStream: FuzzTarget = {
  name: 'nvidia-smi stream',
  input: streams(nvidiaSeeds),
  parse: (text) => {
    const lines: string[] = []
    const splitter = new BoundedLines(MAX_LINE, (line) => lines.push(line))
    for (const chunk of chunks(text)) splitter.push(chunk)
    splitter.flush()
    return lines.map((line) => ({
      line,
      readings: parseNvidiaSmiCsv(line.trim(), MONITOR_NVIDIA_FIELDS).rows.map(nvidiaRowToReading),
    }))
  },
  check: (answer) => {
    for (const { line, readings } of answer as { line: string; readings: MonitorGpuReading[] }[]) {
      if (line.length > MAX_LINE) throw new Error(`a line of ${line.length} characters was held`)
      for (const reading of readings) {
        MonitorGpuReading.parse(reading)
        const percent = reading.utilizationPercent
        if (percent !== null && !(percent >= 0 && percent <= 100)) throw new Error(`utilization ${percent}`)
      }
    }
  },
}

const trainerOutput: FuzzTarget = {
  name: 'trainer output',
  input: streams(seedsIn(join(fixtures, 'logs'), '.log')),
  parse: (text) => {
    const found: { text: string; metrics: ReturnType<typeof parseTrainingLine> }[] = []
    const splitter = new OutputLines((segment) =>
      found.push({ text: segment, metrics: parseTrainingLine(segment) }),
    )
    for (const chunk of chunks(text)) splitter.push(chunk)
    splitter.flush()
    return found
  },
  check: (answer) => {
    for (const { text, metrics } of answer as {
      text: string
      metrics: ReturnType<typeof parseTrainingLine>
    }[]) {
      if (text.length > 64 * 1024 + CHUNK) throw new Error(`a segment of ${text.length} characters was held`)
      for (const [key, value] of Object.entries(metrics?.metrics ?? {})) {
        if (typeof value !== 'number' || !Number.isFinite(value)) throw new Error(`${key}: ${value}`)
        if ((key === 'step' || key === 'totalSteps') && !(Number.isInteger(value) && value >= 0))
          throw new Error(`${key}: ${value}`)
      }
    }
  },
}

it('has seeds for every parser', () => {
  expect(nvidiaSeeds.length).toBeGreaterThan(2)
})

describeFuzzTargets(
  { describe, it, expect, afterAll },
  'fuzz: the monitor stream parsers',
  [nvidiaStream, trainerOutput],
  'parser',
)
