#!/usr/bin/env node
// The flag reference (docs/flags.md) from oclif's manifest of the built CLI: one table per command, so the
// documentation names exactly the flags that exist. `pnpm gen:docs` rewrites it; a test fails when it is stale.
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
export const MANIFEST = join(here, '..', 'oclif.manifest.json')
export const FLAG_DOCS = join(here, '..', '..', '..', 'docs', 'flags.md')

/** A table cell: one line, pipes escaped. */
const cell = (text) =>
  String(text ?? '')
    .replace(/\s+/g, ' ')
    .replace(/\|/g, '\\|')
    .trim()

function flagName(flag) {
  const long = flag.type === 'boolean' && flag.allowNo ? `--[no-]${flag.name}` : `--${flag.name}`
  const value = flag.type === 'option' ? ` ${flag.helpValue ?? 'VALUE'}` : ''
  return `\`${long}${value}\`${flag.char ? `, \`-${flag.char}\`` : ''}`
}

function flagValues(flag) {
  const parts = []
  if (flag.options) parts.push(flag.options.map((o) => `\`${o}\``).join(', '))
  if (flag.multiple) parts.push('repeatable')
  if (flag.required) parts.push('required')
  if (flag.default !== undefined && flag.default !== false) parts.push(`default \`${flag.default}\``)
  return parts.join('; ')
}

/** The Markdown of docs/flags.md for a manifest. */
export function renderFlagDocs(manifest) {
  const out = [
    '<!-- Generated from the CLI by `pnpm gen:docs` (apps/cli/scripts/flag-docs.mjs): do not edit by hand. -->',
    '',
    '# Flags of every command',
    '',
    'Every flag of every `rigfit` command, from the CLI itself (`rigfit <command> --help` says the same). The',
    'pages beside this one explain what the flags do together.',
    '',
  ]
  const commands = Object.values(manifest.commands)
    .filter((command) => !command.hidden)
    .sort((a, b) => a.id.localeCompare(b.id))
  for (const command of commands) {
    out.push(`## \`rigfit ${command.id.replaceAll(':', ' ')}\``, '')
    if (command.summary) out.push(cell(command.summary), '')
    out.push('| flag | values | what |', '| --- | --- | --- |')
    const flags = Object.values(command.flags)
      .filter((flag) => !flag.hidden)
      .sort((a, b) => a.name.localeCompare(b.name))
    for (const flag of flags) {
      out.push(
        `| ${flagName(flag)} | ${cell(flagValues(flag))} | ${cell(flag.summary ?? flag.description)} |`,
      )
    }
    out.push('')
  }
  return `${out.join('\n').trimEnd()}\n`
}

export function readManifest() {
  try {
    return JSON.parse(readFileSync(MANIFEST, 'utf8'))
  } catch (error) {
    throw new Error(
      `cannot read ${MANIFEST} (${error.message}): build the CLI first (pnpm --filter rigfit build)`,
    )
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(FLAG_DOCS, renderFlagDocs(readManifest()))
  console.log(`wrote ${FLAG_DOCS}`)
}
