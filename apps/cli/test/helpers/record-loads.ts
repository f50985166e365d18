import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * Writes a module for `node --import` that appends the URL of every file the process loads to the file named
 * by RIGFIT_TEST_LOADS; returns its path.
 */
export function writeLoadRecorder(dir: string): string {
  const hook = join(dir, 'record-loads.mjs')
  writeFileSync(
    hook,
    `import module from 'node:module'
import { appendFileSync } from 'node:fs'
module.registerHooks({
  load(url, context, next) {
    if (url.startsWith('file:')) appendFileSync(process.env.RIGFIT_TEST_LOADS, url + '\\n')
    return next(url, context)
  },
})
`,
  )
  return hook
}
