import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Args } from '@oclif/core'
import { type PackProblem, printableLine, RigfitError } from '@rigfit/core'
import { displayPath, loadCatalogFile, loadValidationTarget } from '@rigfit/core/node'
import { RigfitCommand } from '../../lib/base-command.js'
import { formatProblem } from '../../lib/packs.js'

interface ValidatedPack {
  name: string
  version: string
  path: string
  rules: number
}

export interface ValidateResult {
  valid: true
  packs: ValidatedPack[]
  rules: string[]
  /** Things that do not stop the pack from loading: rules without a doc. */
  warnings: string[]
}

export default class RulesValidate extends RigfitCommand {
  static override summary =
    'Check a rule pack (a folder, a single-file pack, one rule file, or a folder of packs).'
  static override description =
    'Validates with the same schema and limits rigfit applies when it loads packs: known facts, operators, settings and event types only, no __proto__/constructor/prototype keys, size limits, rule ids matching file names. Exits non-zero and names the file, rule and JSON path of each problem.'
  static override examples = [
    '<%= config.bin %> rules validate ./my-pack',
    '<%= config.bin %> rules validate ./my-pack/rules/my-rule.json',
    '<%= config.bin %> rules validate ~/.config/rigfit/rules --json',
  ]

  static override args = {
    path: Args.string({
      description: 'Pack folder, pack.json, single-file pack, rule file, or folder of packs.',
      required: true,
    }),
  }

  async run(): Promise<ValidateResult> {
    const { args } = await this.parse(RulesValidate)
    if (!existsSync(args.path)) {
      throw new RigfitError('input', 'E_NO_SUCH_PATH', `${args.path}: no such file or directory`, {
        suggestion:
          'Give the path of a pack folder (with pack.json), a pack or rule .json file, or a folder of packs.',
      })
    }
    const target = loadValidationTarget(args.path, { layer: 'user', kind: 'user' })
    const problems: PackProblem[] = [...target.problems]
    const warnings: string[] = []
    for (const pack of target.packs) {
      const catalog = join(pack.origin.path, 'catalog.json')
      if (existsSync(catalog)) problems.push(...loadCatalogFile(catalog).problems)
      if (existsSync(join(pack.origin.path, 'rules'))) {
        for (const rule of pack.rules) {
          if (!existsSync(join(pack.origin.path, 'docs', `${rule.id}.md`))) {
            warnings.push(
              `${displayPath(join(pack.origin.path, 'rules', `${rule.id}.json`))}: rule "${rule.id}" has no docs/${rule.id}.md`,
            )
          }
        }
      }
    }
    if (problems.length > 0) {
      const lines = problems.map(formatProblem)
      throw new RigfitError(
        'rules',
        'E_PACK_INVALID',
        `${problems.length} problem${problems.length === 1 ? '' : 's'} in ${args.path}:\n  ${lines.join('\n  ')}`,
        {
          suggestion:
            'Fix each listed key; docs/rules.md describes the facts, operators, settings and events a rule may use.',
          details: { problems },
        },
      )
    }
    if (target.packs.length === 0 && target.rules.length === 0) {
      throw new RigfitError('rules', 'E_NO_PACKS', `${args.path} holds no rule pack`, {
        suggestion:
          'A pack is a folder with pack.json and rules/<id>.json, or one .json file with schemaVersion, meta, appliesTo and rules.',
      })
    }
    const packs = target.packs.map((pack) => ({
      name: pack.meta.name,
      version: pack.meta.version,
      path: displayPath(pack.origin.path),
      rules: pack.rules.length,
    }))
    if (!this.jsonEnabled()) {
      for (const pack of packs)
        this.log(`ok  ${pack.name} ${pack.version}: ${pack.rules} rules (${printableLine(pack.path)})`)
      for (const rule of target.rules) this.log(`ok  rule ${rule.id}`)
      for (const warning of warnings) this.warn(warning)
    }
    return { valid: true, packs, rules: target.rules.map((rule) => rule.id), warnings }
  }
}
