import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
// @ts-expect-error: a plain .mjs script, typed by its use here
import { FLAG_DOCS, readManifest, renderFlagDocs } from '../scripts/flag-docs.mjs'

interface ManifestFlag {
  name: string
  allowNo?: boolean
}
interface Manifest {
  commands: Record<string, { id: string; flags: Record<string, ManifestFlag> }>
}

const root = join(import.meta.dirname, '..', '..', '..')
const manifest = readManifest() as Manifest
const docs = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

/** The flags a command takes, with the --no- form of the negatable ones. */
function flagsOf(id: string): Set<string> {
  const flags = new Set(['help'])
  for (const flag of Object.values(manifest.commands[id]?.flags ?? {})) {
    flags.add(flag.name)
    if (flag.allowNo) flags.add(`no-${flag.name}`)
  }
  return flags
}
const everyFlag = new Set(['version', ...Object.keys(manifest.commands).flatMap((id) => [...flagsOf(id)])])

// Flags of the other programs the pages show: srun, sbatch, torchrun, accelerate, deepspeed, fio, dd,
// nvidia-smi, rocm-smi, pnpm, git, and the example training script and calibration harness.
const OTHER_TOOLS = new Set(
  `cpus-per-task ntasks-per-node ntasks nodelist jobid job-name gpus-per-node time export exclude standalone
  nproc-per-node nproc rdzv redirects tee config deepspeed args query-gpu showproductname showmeminfo showtemp
  showpower showmaxpower rw bs direct ioengine end global check data max-steps steps grid time-limit max flag`
    .split(/\s+/)
    .filter(Boolean),
)

describe('the flag documentation', () => {
  it('is docs/flags.md as generated from the CLI (after a flag changes: pnpm gen:docs)', () => {
    expect(readFileSync(FLAG_DOCS, 'utf8')).toBe(renderFlagDocs(manifest))
  })

  it('documents every flag of every command there', () => {
    const text = readFileSync(FLAG_DOCS, 'utf8')
    for (const command of Object.values(manifest.commands)) {
      const section =
        text.split(`## \`rigfit ${command.id.replaceAll(':', ' ')}\``)[1]?.split('\n## ')[0] ?? ''
      for (const flag of Object.values(command.flags)) {
        expect(section, `${command.id} --${flag.name}`).toMatch(
          new RegExp(`\\\`--(\\[no-\\])?${flag.name}[ \\\`]`),
        )
      }
    }
  })

  it('names in README.md and docs/ only flags that exist', () => {
    const unknown: string[] = []
    for (const page of docs) {
      readFileSync(join(root, page), 'utf8')
        .split('\n')
        .forEach((line, index) => {
          for (const match of line.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)) {
            const name = match[1] ?? ''
            if (!everyFlag.has(name) && !OTHER_TOOLS.has(name))
              unknown.push(`${page}:${index + 1}: --${name}`)
          }
        })
    }
    expect(unknown).toEqual([])
  })

  it('gives each `rigfit <command>` line only flags of that command', () => {
    const wrong: string[] = []
    const ids = Object.keys(manifest.commands).sort((a, b) => b.length - a.length)
    for (const page of docs) {
      readFileSync(join(root, page), 'utf8')
        .split('\n')
        .forEach((line, index) => {
          for (const call of line.matchAll(/\brigfit ([a-z]+(?: [a-z]+)?)([^`|;&#)]*)/g)) {
            const words = call[1] ?? ''
            const id = ids.find((candidate) => `${words} `.startsWith(`${candidate.replace(':', ' ')} `))
            if (id === undefined) continue
            const args = (call[2] ?? '').split(' -- ')[0] ?? ''
            for (const flag of args.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)) {
              if (!flagsOf(id).has(flag[1] ?? ''))
                wrong.push(`${page}:${index + 1}: rigfit ${words} --${flag[1]}`)
            }
          }
        })
    }
    expect(wrong).toEqual([])
  })
})
