/**
 * The CLI's entry module. Bundled (scripts/bundle.mjs) together with the commands, so that the start-up and the
 * commands share one copy of oclif, read from a few files.
 */
export { execute } from '@oclif/core'
