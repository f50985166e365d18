#!/usr/bin/env node
// Fails when a source file (code and tests, recorded fixtures aside) is longer than MAX_LINES: a file that long
// holds more than one job and is split along its seams instead. Lists the files git knows, or would add.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'

const MAX_LINES = 400
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs|py|sh)$/
const NOT_SOURCE = /(^|\/)(node_modules|dist|fixtures|__snapshots__)\//

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  encoding: 'utf8',
})
  .split('\n')
  .filter((path) => SOURCE.test(path) && !NOT_SOURCE.test(path))

const tooLong = []
for (const path of files) {
  let text
  try {
    text = readFileSync(path, 'utf8')
  } catch {
    continue // listed by git but deleted in the working tree
  }
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
  if (lines > MAX_LINES) tooLong.push(`${path}: ${lines} lines`)
}

if (tooLong.length > 0) {
  console.error(`source files over ${MAX_LINES} lines (split them by responsibility):`)
  for (const line of tooLong) console.error(`  ${line}`)
  process.exit(1)
}
console.log(`${files.length} source files, none over ${MAX_LINES} lines`)
