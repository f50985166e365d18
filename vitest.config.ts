import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { defineConfig } from 'vitest/config'

// One vitest run over every workspace package, so the suite prints a single summary.
const workspaceDirs = ['packages', 'plugins', 'apps'].flatMap((group) =>
  existsSync(group)
    ? readdirSync(group, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && existsSync(join(group, entry.name, 'package.json')))
        .map((entry) => join(group, entry.name))
    : [],
)

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: workspaceDirs.map((dir) => ({
      extends: true,
      test: {
        name: dir.split('/').pop() as string,
        root: `./${dir}`,
        include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
      },
    })),
  },
})
