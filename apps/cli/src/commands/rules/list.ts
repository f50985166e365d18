import { Flags } from '@oclif/core'
import { type LoadedPack, type PackProblem, RigfitError } from '@rigfit/core'
import { RigfitCommand } from '../../lib/base-command.js'
import { describeEvent, describePack } from '../../lib/describe-rule.js'
import { formatProblem, loadAllPacks } from '../../lib/packs.js'

export default class RulesList extends RigfitCommand {
  static override summary = 'List the rule packs in force and their rules.'
  static override description =
    'Shows the core defaults, the pack of every installed plugin, and your own packs (from the config folder and --rules), in precedence order: core < vendor < user. Packs that fail to load are reported and skipped.'
  static override examples = [
    '<%= config.bin %> rules list',
    '<%= config.bin %> rules list --pack rtx40',
    '<%= config.bin %> rules list --json',
  ]

  static override flags = {
    pack: Flags.string({ description: 'Show only this pack.', helpValue: 'NAME' }),
    rules: Flags.string({
      description: 'Also load the packs in this folder (or this pack).',
      helpValue: 'DIR',
    }),
  }

  async run(): Promise<{ packs: LoadedPack[]; problems: PackProblem[] }> {
    const { flags } = await this.parse(RulesList)
    const { packs, problems } = await loadAllPacks(this, { rulesDir: flags.rules })
    const shown = flags.pack === undefined ? packs : packs.filter((pack) => pack.meta.name === flags.pack)
    if (flags.pack !== undefined && shown.length === 0) {
      throw new RigfitError('usage', 'E_UNKNOWN_PACK', `no pack named "${flags.pack}" is loaded`, {
        suggestion: `Loaded packs: ${packs.map((pack) => pack.meta.name).join(', ')}.`,
      })
    }
    if (!this.jsonEnabled()) {
      for (const pack of shown) {
        this.log(describePack(pack))
        this.log(`  ${pack.meta.description}`)
        const width = Math.max(...pack.rules.map((rule) => rule.id.length))
        for (const rule of pack.rules) this.log(`    ${rule.id.padEnd(width)}  ${describeEvent(rule)}`)
        this.log('')
      }
      for (const problem of problems) this.warn(`pack skipped: ${formatProblem(problem)}`)
    }
    return { packs: shown, problems }
  }
}
