import { type ClusterNode, isRigfitError } from '@rigfit/core'
import type { ToolResult } from '../exec/run-tool.js'
import { parseProfileText } from '../profile-file.js'

/** What srun and slurmstepd print when the command does not exist on the node. */
const MISSING_COMMAND = /execve\(\)|No such file or directory|command not found|not found/i

/** The first lines of what a node printed, for a message: enough to recognise, never a whole dump. */
function excerpt(text: string): string {
  const lines = text.trim().split('\n').slice(0, 3).join(' | ')
  return lines.length > 200 ? `${lines.slice(0, 200)}…` : lines
}

/**
 * One node's answer to `srun … rigfit profile --json`, judged: its profile, or why it has none — the deadline
 * passed, rigfit is not installed where the launcher says, the command failed, or what it printed is not a
 * profile. Each message names the node.
 */
export function nodeAnswer(
  name: string,
  result: ToolResult,
  launcher: string[],
  deadlineMs: number,
): Omit<ClusterNode, 'switch'> {
  const fail = (status: ClusterNode['status'], error: string) => ({ name, status, error, profile: null })
  if (result.timedOut)
    return fail(
      'timeout',
      `node ${name} did not answer within ${Math.round(deadlineMs / 1000)} s; its profile step was cancelled`,
    )
  if (result.exitCode !== 0) {
    const said = excerpt(`${result.stderr}\n${result.stdout}`)
    if (MISSING_COMMAND.test(said))
      return fail('failed', `rigfit is not installed on node ${name} as \`${launcher.join(' ')}\` (${said})`)
    return fail(
      'failed',
      `rigfit profile failed on node ${name}: ${result.error ?? 'no exit code'}${said ? ` (${said})` : ''}`,
    )
  }
  try {
    return { name, status: 'ok', error: null, profile: parseProfileText(result.stdout, `node ${name}`) }
  } catch (error) {
    const why = isRigfitError(error) ? error.message : String(error)
    const said = excerpt(result.stdout)
    return fail(
      'invalid',
      `node ${name} did not print a profile: ${why}${said ? ` (it printed: ${said})` : ''}`,
    )
  }
}
