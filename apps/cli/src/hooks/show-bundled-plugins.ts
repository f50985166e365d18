import type { Hook } from '@oclif/core'

/**
 * `rigfit plugins` lists the bundled vendor plugins too: they are oclif "core" plugins, which the plugins
 * command hides unless asked with --core, yet they are the plugins a user most needs to see.
 */
const hook: Hook.Prerun = async ({ Command, argv }) => {
  if (Command.id === 'plugins' && !argv.includes('--core')) argv.push('--core')
}
export default hook
