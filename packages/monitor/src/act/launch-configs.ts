import { readFile } from 'node:fs/promises'
import { isAbsolute, join, relative, resolve } from 'node:path'
import type { ExportManifest, TrainingPlan } from '@rigfit/core'
import { reexport, sha256, writeExportFiles } from '@rigfit/exporters'

/** A folder written by `rigfit export --out DIR`, with its manifest: what `--configs DIR` names. */
export interface ExportedConfigs {
  dir: string
  manifest: ExportManifest
}

/** The configs one launch reads, and the command that reads them. */
export interface LaunchConfigs {
  dir: string
  command: string[]
  /** Files of the user's folder edited since the export: their edits are not in the copies made again. */
  edited: string[]
}

/**
 * The configs a launch reads. With the plan's own settings, the user's folder as it is. When the launch's settings
 * differ (a rung of the OOM ladder, failover), every export in the folder is made again from the launch's plan copy,
 * with the options it was made with, into `<logDir>/attempt-N/configs/`, and every argument of the command that
 * names a file of the folder is pointed at its new copy: an HF Trainer, accelerate, DeepSpeed or Lightning run
 * then trains with the new micro-batch and accumulation, not the settings that ran out of memory.
 */
export async function configsForLaunch(
  configs: ExportedConfigs,
  launchPlan: TrainingPlan,
  settingsChanged: boolean,
  command: string[],
  cwd: string,
  logDir: string,
  attempt: number,
): Promise<LaunchConfigs> {
  if (!settingsChanged) return { dir: configs.dir, command, edited: [] }
  const files = reexport(configs.manifest, launchPlan)
  const dir = join(logDir, `attempt-${attempt}`, 'configs')
  await writeExportFiles(dir, files, { force: true })
  return {
    dir,
    command: pointAtCopies(
      command,
      cwd,
      configs.dir,
      dir,
      files.map((f) => f.path),
    ),
    edited: await editedSinceExport(configs),
  }
}

/**
 * The command with each argument that names one of `files` in `fromDir` (as a word, or as the value of
 * `--flag=path`) pointing at the same file in `toDir`. Other arguments are left exactly as given.
 */
export function pointAtCopies(
  command: string[],
  cwd: string,
  fromDir: string,
  toDir: string,
  files: string[],
): string[] {
  const base = resolve(cwd, fromDir)
  const known = new Set(files)
  const copyOf = (word: string): string | null => {
    if (word === '') return null
    const rel = relative(base, resolve(cwd, word))
    if (rel.startsWith('..') || isAbsolute(rel)) return null
    const path = rel.split('\\').join('/')
    return known.has(path) ? join(toDir, path) : null
  }
  return command.map((word, i) => {
    // The program itself may be an exported launch script; later words may be files or --flag=file.
    const whole = copyOf(word)
    if (whole !== null) return whole
    const eq = word.indexOf('=')
    if (i > 0 && word.startsWith('-') && eq > 0) {
      const value = copyOf(word.slice(eq + 1))
      if (value !== null) return `${word.slice(0, eq + 1)}${value}`
    }
    return word
  })
}

/** Files in the folder whose content no longer matches the hash the export recorded (missing ones included). */
async function editedSinceExport(configs: ExportedConfigs): Promise<string[]> {
  const edited = new Set<string>()
  for (const entry of configs.manifest.exports) {
    for (const file of entry.files) {
      const text = await readFile(join(configs.dir, file.path), 'utf8').catch(() => null)
      if (text === null || sha256(text) !== file.sha256) edited.add(file.path)
    }
  }
  return [...edited]
}
