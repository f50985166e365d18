/**
 * Errors a user can cause (bad flags, files, packs, tool output) carry a code, a message that names
 * the file / field / flag, and a suggestion. The CLI maps each code's kind to a distinct exit code.
 */
export const ERROR_EXIT_CODES = {
  usage: 2,
  input: 3,
  validation: 4,
  rules: 5,
  hardware: 6,
  io: 7,
  exists: 8,
  child: 9,
  fit: 10,
} as const
export type ErrorKind = keyof typeof ERROR_EXIT_CODES

export class RigfitError extends Error {
  readonly code: string
  readonly kind: ErrorKind
  readonly suggestion: string | undefined
  readonly details: unknown

  constructor(
    kind: ErrorKind,
    code: string,
    message: string,
    options: { suggestion?: string; details?: unknown; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'RigfitError'
    this.kind = kind
    this.code = code
    this.suggestion = options.suggestion
    this.details = options.details
  }

  get exitCode(): number {
    return ERROR_EXIT_CODES[this.kind]
  }

  toJSON(): { code: string; kind: ErrorKind; message: string; suggestion: string | null; details: unknown } {
    return {
      code: this.code,
      kind: this.kind,
      message: this.message,
      suggestion: this.suggestion ?? null,
      details: this.details ?? null,
    }
  }
}

export function isRigfitError(value: unknown): value is RigfitError {
  return value instanceof RigfitError
}
