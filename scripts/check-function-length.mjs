#!/usr/bin/env node
// Fails when a function in a package's src/ (tests aside) is longer than MAX_LINES: a function that long does
// more than one step, and is split into named steps instead. Functions not yet split are named in
// scripts/function-length-allowlist.txt, which may only shrink: a listed function that is short enough, or
// gone, fails the check too, so the list is kept exact.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import ts from 'typescript'

const MAX_LINES = 80
const ALLOWLIST = 'scripts/function-length-allowlist.txt'
const SOURCE = /(^|\/)src\/.*\.(ts|mts|cts)$/
const NOT_SOURCE = /(^|\/)(node_modules|dist|fixtures)\/|\.test\.ts$|\.d\.ts$/

/** The name a reader finds the function by: its own, its variable's or property's, else `<anonymous>`. */
function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) {
    const owner =
      node.parent && ts.isClassLike(node.parent) && node.parent.name ? `${node.parent.name.text}.` : ''
    return owner + node.name.text
  }
  if (ts.isConstructorDeclaration(node)) return `${node.parent.name?.text ?? '<class>'}.constructor`
  const parent = node.parent
  if (
    parent &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) &&
    ts.isIdentifier(parent.name)
  )
    return parent.name.text
  return '<anonymous>'
}

function longFunctions(path) {
  const text = readFileSync(path, 'utf8')
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true)
  const found = []
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = file.getLineAndCharacterOfPosition(node.getStart(file)).line
      const end = file.getLineAndCharacterOfPosition(node.getEnd()).line
      const lines = end - start + 1
      if (lines > MAX_LINES) found.push({ key: `${path}:${nameOf(node)}`, lines })
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  encoding: 'utf8',
})
  .split('\n')
  .filter((path) => SOURCE.test(path) && !NOT_SOURCE.test(path))

const allowed = new Set(
  readFileSync(ALLOWLIST, 'utf8')
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim())
    .filter(Boolean),
)

const tooLong = []
const seen = new Set()
for (const path of files) {
  let found
  try {
    found = longFunctions(path)
  } catch (error) {
    if (error?.code === 'ENOENT') continue // listed by git but deleted in the working tree
    throw error
  }
  for (const { key, lines } of found) {
    seen.add(key)
    if (!allowed.has(key)) tooLong.push(`${key}: ${lines} lines`)
  }
}
const stale = [...allowed].filter((key) => !seen.has(key))

if (tooLong.length > 0) {
  console.error(`functions over ${MAX_LINES} lines (split them into named steps):`)
  for (const line of tooLong) console.error(`  ${line}`)
}
if (stale.length > 0) {
  console.error(`${ALLOWLIST} names functions that are no longer over ${MAX_LINES} lines (remove them):`)
  for (const key of stale) console.error(`  ${key}`)
}
if (tooLong.length > 0 || stale.length > 0) process.exit(1)
console.log(
  `${files.length} source files, no function over ${MAX_LINES} lines but the ${allowed.size} of ${ALLOWLIST}`,
)
