/**
 * Parses the Python literals Hugging Face Trainer prints for its logs, e.g.
 * `{'loss': 2.31, 'grad_norm': np.float64(1.2), 'learning_rate': 4e-05, 'epoch': 0.5}`:
 * dicts, lists, tuples, quoted strings, numbers (with nan/inf), True/False/None, and one-argument calls such as
 * `tensor(1.5)` or `np.float64(2.0)`, read as their argument. Anything else answers undefined: it is data.
 */
export function parsePythonLiteral(text: string): unknown {
  const parser = new LiteralParser(text)
  try {
    const value = parser.value()
    parser.skipSpace()
    return parser.atEnd() ? value : undefined
  } catch {
    return undefined
  }
}

class LiteralParser {
  private at = 0

  constructor(private readonly text: string) {}

  atEnd(): boolean {
    return this.at >= this.text.length
  }

  skipSpace(): void {
    while (this.at < this.text.length && /\s/.test(this.text[this.at] as string)) this.at += 1
  }

  value(): unknown {
    this.skipSpace()
    const char = this.text[this.at]
    if (char === '{') return this.dict()
    if (char === '[') return this.sequence('[', ']')
    if (char === '(') return this.sequence('(', ')')
    if (char === "'" || char === '"') return this.string()
    if (char !== undefined && /[-+0-9.]/.test(char)) return this.number()
    return this.word()
  }

  private expect(char: string): void {
    this.skipSpace()
    if (this.text[this.at] !== char) throw new Error(`expected ${char} at ${this.at}`)
    this.at += 1
  }

  private peek(): string | undefined {
    this.skipSpace()
    return this.text[this.at]
  }

  private dict(): Record<string, unknown> {
    const out: Record<string, unknown> = Object.create(null)
    this.expect('{')
    while (this.peek() !== '}') {
      const key = this.value()
      if (typeof key !== 'string' && typeof key !== 'number') throw new Error('bad key')
      this.expect(':')
      const value = this.value()
      const name = String(key)
      if (name !== '__proto__') out[name] = value
      if (this.peek() === ',') this.at += 1
      else break
    }
    this.expect('}')
    return out
  }

  private sequence(open: string, close: string): unknown[] {
    const out: unknown[] = []
    this.expect(open)
    while (this.peek() !== close) {
      out.push(this.value())
      if (this.peek() === ',') this.at += 1
      else break
    }
    this.expect(close)
    return out
  }

  private string(): string {
    const quote = this.text[this.at] as string
    let out = ''
    this.at += 1
    while (this.at < this.text.length) {
      const char = this.text[this.at] as string
      this.at += 1
      if (char === quote) return out
      if (char === '\\') {
        const next = this.text[this.at] ?? ''
        this.at += 1
        out += next === 'n' ? '\n' : next === 't' ? '\t' : next
      } else {
        out += char
      }
    }
    throw new Error('unterminated string')
  }

  private number(): number {
    const match = /^[-+]?(?:inf|nan|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)/.exec(this.text.slice(this.at))
    if (!match) throw new Error('bad number')
    this.at += match[0].length
    const literal = match[0].replace(/^\+/, '')
    if (/inf$/.test(literal))
      return literal.startsWith('-') ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY
    if (/nan$/.test(literal)) return Number.NaN
    return Number(literal)
  }

  private word(): unknown {
    const match = /^[A-Za-z_][A-Za-z0-9_.]*/.exec(this.text.slice(this.at))
    if (!match) throw new Error(`unexpected character at ${this.at}`)
    this.at += match[0].length
    const word = match[0]
    if (this.peek() === '(') {
      // tensor(1.5), np.float64(2.0), tensor(1.5, device='cuda:0'): the first argument is the value
      this.at += 1
      const inner = this.value()
      let depth = 1
      while (depth > 0 && this.at < this.text.length) {
        const char = this.text[this.at]
        if (char === '(') depth += 1
        if (char === ')') depth -= 1
        this.at += 1
      }
      if (depth > 0) throw new Error('unterminated call')
      return inner
    }
    if (word === 'True') return true
    if (word === 'False') return false
    if (word === 'None') return null
    if (word === 'nan') return Number.NaN
    if (word === 'inf') return Number.POSITIVE_INFINITY
    throw new Error(`unknown name ${word}`)
  }
}
