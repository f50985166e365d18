import { Flags } from '@oclif/core'

/**
 * `--timeout`: how long an input may take to arrive. A FIFO or pipe given as an input file (`--from <(…)`,
 * `--plan FIFO`) must deliver its whole text in it, and a Hub request for `--model org/name` must answer in it;
 * then the command fails with exit 7 naming what it waited for, instead of waiting for ever. Regular files are
 * read at once whatever it says. (`rigfit profile` and `doctor` have their own `--timeout`, the probes' deadline
 * in milliseconds, which bounds `profile --from` too.)
 */
export const inputTimeoutFlags = {
  timeout: Flags.integer({
    description:
      'Seconds to wait for an input: a FIFO or pipe given as an input file (--from, --plan), or the Hugging Face Hub (or HF_ENDPOINT) when --model names a Hub id that is not cached; then rigfit exits 7.',
    default: 10,
    min: 1,
    max: 86_400,
  }),
}

/** The deadline in ms from the parsed flag. */
export function inputTimeoutMs(flags: { timeout?: number | undefined }): number {
  return (flags.timeout ?? 10) * 1000
}
