import { existsSync, mkdtempSync, readdirSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const repoRoot = fileURLToPath(new URL('.', import.meta.url))

// One vitest run over every workspace package, so the suite prints a single summary. A package's own
// `test` script selects its project with --project <folder name>.
const workspaceDirs = ['packages', 'plugins', 'apps'].flatMap((group) =>
  existsSync(join(repoRoot, group))
    ? readdirSync(join(repoRoot, group), { withFileTypes: true })
        .filter(
          (entry) => entry.isDirectory() && existsSync(join(repoRoot, group, entry.name, 'package.json')),
        )
        .map((entry) => join(group, entry.name))
    : [],
)
// The end-to-end tests on real engines are a package of their own at the top.
if (existsSync(join(repoRoot, 'e2e', 'package.json'))) workspaceDirs.push('e2e')

// Every package keeps its tests in test/, mirroring src/ (src/plan/x.ts is tested by test/plan/x.test.ts). A test
// file under src/ would not run, so it stops every run instead of being skipped in silence.
const misplaced = workspaceDirs.flatMap((dir) =>
  existsSync(join(repoRoot, dir, 'src'))
    ? readdirSync(join(repoRoot, dir, 'src'), { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.test.ts'))
        .map((file) => join(dir, 'src', file))
    : [],
)
if (misplaced.length > 0) {
  throw new Error(
    `tests live in each package's test/ folder, mirroring src/; move ${misplaced.join(', ')} (src/a/b.test.ts -> test/a/b.test.ts)`,
  )
}

export default defineConfig({
  test: {
    // Deadlines catch hangs; they are not speed checks. With two busy-looping processes beside the suite on a
    // 2-core machine the longest tests take three to four times as long as on an idle one (about 45 s).
    testTimeout: 300_000,
    hookTimeout: 300_000,
    pool: 'forks',
    // No test reads or writes the real user's config (calibration store, user rule packs): every run gets its own
    // empty config folder, which the CLIs the tests start inherit. A test that needs one sets its own.
    env: { XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'rigfit-test-config-')) },
    // One test file per core. vitest's default leaves a core to its main process, which here only collects
    // results; on a 2-core machine that default would run the files one at a time.
    maxWorkers: availableParallelism(),
    projects: workspaceDirs.map((dir) => ({
      extends: true,
      test: {
        name: dir.split('/').pop() as string,
        root: join(repoRoot, dir),
        include: ['test/**/*.test.ts'],
      },
    })),
  },
})
