import { spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { createWriteStream, existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { tempDir, WORDS, writeWordTokenizer } from './helpers.js'

/** The built package: a child process runs it under a heap limit (the test task builds before testing). */
const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url))

/** Writes rows until the file holds `bytes`; returns the rows' total word count. */
async function writeRows(path: string, bytes: number): Promise<{ rows: number; words: number }> {
  const out = createWriteStream(path)
  let written = 0
  let rows = 0
  let words = 0
  while (written < bytes) {
    const count = 20 + (rows % 41)
    const text = Array.from({ length: count }, (_, k) => WORDS[(rows * 7 + k) % WORDS.length]).join(' ')
    const line = `${JSON.stringify({ text, id: rows })}\n`
    written += Buffer.byteLength(line)
    rows += 1
    words += count
    if (!out.write(line)) await once(out, 'drain')
  }
  out.end()
  await once(out, 'finish')
  return { rows, words }
}

/** Node under a 32 MiB old-space heap and 1 MiB young space: the whole file cannot fit as a string. */
function runLimited(script: string): { status: number | null; stdout: string; stderr: string } {
  const child = spawnSync(
    process.execPath,
    ['--max-old-space-size=32', '--max-semi-space-size=1', '--input-type=module', '-e', script],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  )
  return { status: child.status, stdout: child.stdout, stderr: child.stderr }
}

describe('a dataset far larger than the memory allowed', () => {
  it('is counted exactly by streaming, under a heap that cannot hold it', async () => {
    expect(existsSync(entry), `build the package first: ${entry}`).toBe(true)
    const dir = tempDir()
    const path = join(dir, 'large.jsonl')
    const { rows, words } = await writeRows(path, 128 * 2 ** 20)
    const size = statSync(path).size
    const tokenizer = writeWordTokenizer(dir)

    // Control: reading the file whole fails under the same limit, so the limit does bound the counter.
    const whole = runLimited(
      `import { readFileSync } from 'node:fs'; const rows = readFileSync(${JSON.stringify(path)}, 'utf8').split('\\n'); console.log(rows.length)`,
    )
    expect(whole.status).not.toBe(0)

    const counted = runLimited(
      `import { countDatasetTokens } from ${JSON.stringify(entry)}
       let last = 0
       const result = await countDatasetTokens(${JSON.stringify(path)}, {
         tokenizer: ${JSON.stringify(tokenizer)},
         onProgress: (read) => { if (read < last) throw new Error('progress went back'); last = read },
       })
       console.log(JSON.stringify({ result, last, maxRssBytes: process.resourceUsage().maxRSS * 1024 }))`,
    )
    expect(counted.stderr).toBe('')
    expect(counted.status).toBe(0)
    const { result, last, maxRssBytes } = JSON.parse(counted.stdout)
    expect(result).toMatchObject({ tokens: words, examples: rows, bytes: size, method: 'tokenizer' })
    expect(last).toBe(size)
    // The process as a whole (code, heaps, buffers) stays below the file's size: nothing read it whole.
    expect(maxRssBytes).toBeLessThan(size)
  })
})
