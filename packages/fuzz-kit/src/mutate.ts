import fc from 'fast-check'

/**
 * Inputs for the parser fuzz suite: recorded tool outputs, mutated the way broken or hostile tools and files
 * break them. The pieces below are the ones that have broken parsers before: signs and fractions where whole
 * numbers belong, numbers too big for a double, missing-value markers, prototype keys, line terminators a
 * regular expression's `.` does not cross, escape codes, and long runs of one character.
 */
const HOSTILE_TOKENS = [
  '',
  ' ',
  '-1',
  '-1e308',
  '1e308',
  '0.5',
  '-0',
  'NaN',
  'Infinity',
  '1e31',
  '99999999999999999999999',
  '[N/A]',
  'N/A',
  '[Not Supported]',
  '__proto__',
  'constructor',
  'toString',
  'GPU0',
  'GPU1',
  'GPU10000000000000000000000000000000',
  'NV12',
  'X',
  'max',
  'kB',
  '-16 GiB',
  '\u2028',
  '\u0000',
  '\u001b[4m',
  '\r',
  ':',
  ',',
  '=',
  '\t',
  '"',
  "'",
  '%',
  '0',
  '1',
  '64',
  '1023',
  '1024',
  '4294967296',
]

/** A run of one character or word; rarely long enough to make a quadratic pattern show in the timings. */
const run = fc
  .record({
    piece: fc.constantFrom(
      ' ',
      '\t',
      '0',
      '9',
      ',',
      ':',
      'a',
      '/',
      '.',
      '[',
      '"',
      '%',
      'GPU0',
      'InternalBattery',
      ', ',
    ),
    length: fc.oneof(
      { weight: 9, arbitrary: fc.integer({ min: 1, max: 400 }) },
      fc.integer({ min: 400, max: 20_000 }),
    ),
  })
  .map(({ piece, length }) => piece.repeat(Math.ceil(length / piece.length)))

export const token = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...HOSTILE_TOKENS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12, unit: 'binary' }) },
  { weight: 1, arbitrary: run },
)

interface TextMutation {
  op: 'replace' | 'insert' | 'duplicate' | 'delete' | 'swap' | 'truncate' | 'newline'
  at: number
  other: number
  token: string
  count: number
}

const textMutation: fc.Arbitrary<TextMutation> = fc.record({
  op: fc.constantFrom(
    'replace',
    'replace',
    'replace',
    'insert',
    'duplicate',
    'delete',
    'swap',
    'truncate',
    'newline',
  ),
  at: fc.nat(),
  other: fc.nat(),
  token,
  count: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 60, max: 80 })),
})

function applyText(text: string, mutation: TextMutation): string {
  const lines = text.split('\n')
  const at = mutation.at % lines.length
  const line = lines[at] as string
  switch (mutation.op) {
    case 'replace': {
      // Replace one field of the line: the pieces between separators tools use.
      const pieces = line.split(/([\s,:=]+)/)
      pieces[(mutation.other % Math.ceil(pieces.length / 2)) * 2] = mutation.token
      lines[at] = pieces.join('')
      break
    }
    case 'insert': {
      const position = mutation.other % (line.length + 1)
      lines[at] = line.slice(0, position) + mutation.token + line.slice(position)
      break
    }
    case 'duplicate':
      lines.splice(at, 0, ...Array.from({ length: mutation.count }, () => line))
      break
    case 'delete':
      lines.splice(at, 1)
      break
    case 'swap':
      lines[at] = lines[mutation.other % lines.length] as string
      lines[mutation.other % lines.length] = line
      break
    case 'truncate':
      return lines.join('\n').slice(0, mutation.other % (text.length + 1))
    case 'newline':
      lines[at] = `${line}\r`
      break
  }
  return lines.join('\n')
}

/** Recorded text outputs with up to eight mutations each, or (sometimes) any string at all. */
export function mutatedText(seeds: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    {
      weight: 9,
      arbitrary: fc
        .tuple(fc.constantFrom(...seeds), fc.array(textMutation, { maxLength: 8 }))
        .map(([seed, mutations]) => mutations.reduce(applyText, seed)),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 200, unit: 'binary' }) },
  )
}

const hostileJson = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom<unknown>(
      -1,
      -1e308,
      1e308,
      0.5,
      -0.5,
      1e31,
      2 ** 53,
      0,
      '',
      'N/A',
      '-1',
      '-1e308',
      '0.5 MB',
      '-16 GiB',
      null,
      true,
      [],
      {},
      { value: -1, unit: 'MB' },
      { value: 'x' },
      { value: 1e308, unit: 'GB' },
      '__proto__',
    ),
  },
  { weight: 2, arbitrary: token },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
)

interface JsonMutation {
  op: 'replace' | 'delete' | 'duplicate' | 'rename'
  at: number
  value: unknown
  key: string
  count: number
}

const jsonMutation: fc.Arbitrary<JsonMutation> = fc.record({
  op: fc.constantFrom('replace', 'replace', 'replace', 'delete', 'duplicate', 'rename'),
  at: fc.nat(),
  value: hostileJson,
  key: fc.oneof(fc.constantFrom('__proto__', 'constructor', 'gpu', 'card0', 'card00', 'gpu_data'), token),
  count: fc.oneof(fc.integer({ min: 1, max: 3 }), fc.integer({ min: 60, max: 80 })),
})

type Container = Record<string, unknown> | unknown[]

/** Every [container, key] in a JSON tree, depth first (the root's own slot is not one). */
function slots(value: unknown, found: [Container, string | number][] = []): [Container, string | number][] {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      found.push([value, index])
      slots(item, found)
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      found.push([value as Container, key])
      slots(item, found)
    }
  }
  return found
}

function applyJson(root: unknown, mutation: JsonMutation): unknown {
  const all = slots(root)
  // Values are copied in: constants are shared between inputs, and a tree must never contain itself.
  if (all.length === 0) return mutation.op === 'replace' ? structuredClone(mutation.value) : root
  const [container, key] = all[mutation.at % all.length] as [Container, string | number]
  const record = container as Record<string | number, unknown>
  if (mutation.op === 'replace') record[key] = structuredClone(mutation.value)
  else if (mutation.op === 'delete') {
    if (Array.isArray(container)) container.splice(key as number, 1)
    else delete record[key]
  } else if (mutation.op === 'duplicate' && Array.isArray(container))
    container.splice(
      key as number,
      0,
      ...Array.from({ length: mutation.count }, () => structuredClone(container[key as number])),
    )
  else if (mutation.op === 'rename' && !Array.isArray(container)) {
    const value = record[key]
    delete record[key]
    Object.defineProperty(container, mutation.key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return root
}

/** Recorded JSON outputs with up to eight mutations of their tree, sometimes cut short or any JSON at all. */
export function mutatedJson(seeds: string[]): fc.Arbitrary<string> {
  const mutated = fc
    .tuple(fc.constantFrom(...seeds), fc.array(jsonMutation, { maxLength: 8 }))
    .map(
      ([seed, mutations]) =>
        JSON.stringify(mutations.reduce(applyJson, JSON.parse(seed) as unknown)) ?? 'null',
    )
  return fc.oneof(
    { weight: 8, arbitrary: mutated },
    {
      weight: 1,
      arbitrary: fc.tuple(mutated, fc.nat()).map(([text, cut]) => text.slice(0, cut % (text.length + 1))),
    },
    { weight: 1, arbitrary: fc.json({ maxDepth: 3 }) },
  )
}
