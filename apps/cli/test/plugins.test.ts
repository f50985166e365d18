import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { stripVTControlCharacters } from 'node:util'
import { describe, expect, it } from 'vitest'

const cli = fileURLToPath(new URL('../bin/run.js', import.meta.url))

describe('rigfit plugins', () => {
  it('lists the nine bundled vendor plugins without needing --core', () => {
    const result = spawnSync(process.execPath, [cli, 'plugins'], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    })
    expect(result.status).toBe(0)
    // oclif colours versions when it thinks a terminal (or CI) can show it.
    const text = stripVTControlCharacters(result.stdout)
    for (const family of [
      'rtx50',
      'rtx40',
      'rtx30',
      'rtx20',
      'datacenter',
      'rdna',
      'apple',
      'cpu',
      'intel',
    ]) {
      expect(text).toMatch(new RegExp(`@rigfit/plugin-${family} \\d+\\.\\d+\\.\\d+`))
    }
  })
})
