import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const cli = fileURLToPath(new URL('../bin/run.js', import.meta.url))

describe('rigfit plugins', () => {
  it('lists the seven bundled vendor plugins without needing --core', () => {
    const result = spawnSync(process.execPath, [cli, 'plugins'], { encoding: 'utf8' })
    expect(result.status).toBe(0)
    for (const family of ['rtx40', 'rtx30', 'rtx20', 'datacenter', 'rdna', 'apple', 'cpu']) {
      expect(result.stdout).toMatch(new RegExp(`@rigfit/plugin-${family} \\d+\\.\\d+\\.\\d+`))
    }
  })
})
