import { Flags } from '@oclif/core'

/**
 * `--timeout`: how long a FIFO or pipe given as an input file (`--from <(…)`, `--plan FIFO`) may take to deliver
 * its whole text; then the command fails with exit 7 naming the file, instead of waiting for ever. Regular
 * files are read at once whatever it says. (`rigfit profile` and `doctor` have their own `--timeout`, the
 * probes' deadline in milliseconds, which bounds `profile --from` too.)
 */
export const inputTimeoutFlags = {
  timeout: Flags.integer({
    description:
      'Seconds a FIFO or pipe given as an input file (--from, --plan) may take to deliver it; then rigfit exits 7.',
    default: 10,
    min: 1,
    max: 86_400,
  }),
}

/** The deadline in ms from the parsed flag. */
export function inputTimeoutMs(flags: { timeout?: number | undefined }): number {
  return (flags.timeout ?? 10) * 1000
}
