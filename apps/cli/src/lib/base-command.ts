import { Command, Errors, Flags } from '@oclif/core'
import { isRigfitError, printable, printableKeepingColour, RigfitError } from '@rigfit/core'
import { ZodError } from 'zod'

/**
 * Every rigfit command: `--json` (then only JSON on stdout), and errors rendered with their code and
 * suggestion, exiting with the code of their kind (see ERROR_EXIT_CODES in @rigfit/core).
 */
export abstract class RigfitCommand extends Command {
  static override enableJsonFlag = true

  static override baseFlags = {
    'no-color': Flags.boolean({ description: 'Print without colours.', helpGroup: 'GLOBAL' }),
  }

  protected get colorEnabled(): boolean {
    return process.stdout.isTTY === true && !process.env.NO_COLOR && !this.argv.includes('--no-color')
  }

  /** Text for the terminal: control characters from files and tools escaped, rigfit's own colours kept. */
  protected terminalText(text: string): string {
    return printableKeepingColour(text)
  }

  override log(message = '', ...args: unknown[]): void {
    super.log(this.terminalText(message), ...args)
  }

  override logToStderr(message = '', ...args: unknown[]): void {
    super.logToStderr(this.terminalText(message), ...args)
  }

  override warn(input: Error | string): Error | string {
    return super.warn(typeof input === 'string' ? this.terminalText(input) : input)
  }

  /** Writes text as it is laid out (no newline added) to stdout, escaped like log(). */
  protected writeOut(text: string): void {
    process.stdout.write(this.terminalText(text))
  }

  /** Writes text as it is laid out (no newline added) to stderr, escaped like log(). */
  protected writeErr(text: string): void {
    process.stderr.write(this.terminalText(text))
  }

  protected override async catch(
    error: Error & { exitCode?: number; oclif?: { exit?: number } },
  ): Promise<unknown> {
    const rigfitError = toRigfitError(error)
    if (!rigfitError) throw error
    if (this.jsonEnabled()) {
      process.stdout.write(`${JSON.stringify({ error: rigfitError.toJSON() }, null, 2)}\n`)
    } else {
      // Messages quote file names, keys and tool output: nothing in them may act on the terminal.
      process.stderr.write(`Error [${rigfitError.code}]: ${printable(rigfitError.message)}\n`)
      if (rigfitError.suggestion) process.stderr.write(`Suggestion: ${printable(rigfitError.suggestion)}\n`)
    }
    process.exitCode = rigfitError.exitCode
    throw new Errors.ExitError(rigfitError.exitCode)
  }
}

/** Converts a user-caused error (ours or an oclif flag/argument error) into a RigfitError; others stay as they are. */
function toRigfitError(error: Error & { oclif?: { exit?: number } }): RigfitError | null {
  if (isRigfitError(error)) {
    // A flag's own parser threw it: oclif wrapped its message in "Parsing --flag \n\t…\nSee more help"; unwrap.
    const wrapped = /^Parsing --[\w-]+\s*\n\t([\s\S]*?)(?:\nSee more help with --help)?$/.exec(error.message)
    if (!wrapped) return error
    return new RigfitError(error.kind, error.code, wrapped[1] as string, {
      ...(error.suggestion === undefined ? {} : { suggestion: error.suggestion }),
      details: error.details,
    })
  }
  if (error instanceof ZodError) {
    return new RigfitError(
      'validation',
      'E_VALIDATION',
      error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; '),
    )
  }
  if (error instanceof Errors.ExitError) return null
  // oclif marks flag and argument parsing errors (unknown, missing, invalid, exclusive) with exit code 2.
  if (
    error.oclif?.exit === 2 ||
    error.name === 'CLIError' ||
    error.constructor?.name?.endsWith('FlagError') ||
    error.constructor?.name?.endsWith('ArgError')
  ) {
    // oclif puts the flag on the first line and what was wrong with it on the next ones; drop its own help hint.
    const message = error.message
      .split('\n')
      .map((line) => line.trim())
      .filter(
        (line) =>
          line !== '' && !/^See more help with/.test(line) && !/^The following error occurred:?$/.test(line),
      )
      .join(': ')
    return new RigfitError('usage', 'E_USAGE', message, {
      suggestion: 'Run the command with --help to see its flags.',
    })
  }
  return null
}
