// Runs every bench/*.bench.mjs in turn (after `pnpm build`) and prints their figures.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const benchDir = fileURLToPath(new URL('.', import.meta.url))
const only = process.argv.slice(2)
const scripts = readdirSync(benchDir)
  .filter((file) => file.endsWith('.bench.mjs'))
  .filter((file) => only.length === 0 || only.some((name) => file.startsWith(name)))
  .sort()

let failed = 0
for (const script of scripts) {
  console.log(`\n== ${script}`)
  const result = spawnSync(process.execPath, [`${benchDir}${script}`], { stdio: 'inherit' })
  if (result.status !== 0) {
    failed += 1
    console.error(`${script} exited with ${result.status ?? result.signal}`)
  }
}
process.exitCode = failed === 0 ? 0 : 1
