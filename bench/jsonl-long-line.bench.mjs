// Time and memory of the .jsonl line reader on one long line (run after `pnpm build`). The reader keeps an
// unfinished line as pieces and searches each chunk once, so the time grows with the bytes read, and a line past
// the 256 MiB limit is refused as soon as the limit is passed, not at the line's end.
import { closeSync, openSync, rmSync, statSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileLines } from '../packages/dataset/dist/read-text.js'

const MIB = 1 << 20
const LIMIT = 256 * MIB
const path = join(tmpdir(), `rigfit-long-line-${process.pid}.jsonl`)

function writeLine(mib) {
  const fd = openSync(path, 'w')
  const block = Buffer.alloc(MIB, 'x')
  writeSync(fd, '{"text":"')
  for (let i = 0; i < mib; i += 1) writeSync(fd, block)
  writeSync(fd, '"}\n')
  closeSync(fd)
}

for (const mib of [32, 64, 128, 512]) {
  writeLine(mib)
  const bytes = statSync(path).size
  const started = performance.now()
  let outcome = 'read'
  try {
    for await (const { text } of fileLines(path, bytes, {}, LIMIT)) if (text.length < 0) break
  } catch (error) {
    outcome = error.constructor.name
  }
  const seconds = (performance.now() - started) / 1000
  const rssMiB = Math.round(process.memoryUsage().rss / MIB)
  console.log(`${String(mib).padStart(4)} MiB line: ${seconds.toFixed(2)} s, ${outcome}, RSS ${rssMiB} MiB`)
}
rmSync(path, { force: true })
