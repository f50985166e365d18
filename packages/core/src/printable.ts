/**
 * Text from files and tools reaches the terminal through here. Control characters could clear the screen, set
 * the window title (OSC), move the cursor or return to the start of a line to overwrite what rigfit printed
 * (ESC, CR, BEL, C1 controls), and bidirectional overrides reorder what a reader sees; each is shown as a visible
 * escape instead. Newlines and tabs stay: rigfit lays out its own text with them.
 */

// C0 controls but tab and newline, DEL, C1 controls, and the bidirectional embedding/override/isolate marks.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g
const UNSAFE_ANY = new RegExp(UNSAFE.source)
// Select Graphic Rendition (colours, bold): the only escape sequence rigfit writes itself.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching the escape character is the point
const SGR = /\u001b\[[0-9;]{0,32}m/g

function visible(char: string): string {
  const code = char.codePointAt(0) as number
  if (char === '\r') return '\\r'
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`
  return `\\u${code.toString(16).padStart(4, '0')}`
}

/** The text with every unsafe control character shown as an escape (`\x1b`, `\r`, `\u202e`). */
export function printable(text: string): string {
  return text.replace(UNSAFE, visible)
}

/**
 * The rendition codes rigfit itself writes: reset, bold, dim, italic, underline, their ends, and the plain
 * foreground and background colours. Blink (5, 6), reverse (7) and conceal (8), which can hide or disguise text,
 * are not among them.
 */
function isPlainRendition(sequence: string): boolean {
  const codes = sequence.slice(2, -1).split(';')
  return codes.every((part) => {
    const code = part === '' ? 0 : Number(part)
    return (
      code <= 4 ||
      (code >= 22 && code <= 24) ||
      (code >= 30 && code <= 37) ||
      code === 39 ||
      (code >= 40 && code <= 47) ||
      code === 49 ||
      (code >= 90 && code <= 97)
    )
  })
}

/**
 * Like printable, keeping plain colour sequences (SGR) intact: for output rigfit coloured itself. Such a
 * sequence cannot move the cursor, clear the screen, set a title, nor hide or blink text.
 */
export function printableKeepingColour(text: string): string {
  let out = ''
  let last = 0
  for (const match of text.matchAll(SGR)) {
    const kept = isPlainRendition(match[0]) ? match[0] : printable(match[0])
    out += printable(text.slice(last, match.index)) + kept
    last = match.index + match[0].length
  }
  return out + printable(text.slice(last))
}

/** One line: like printable, with newlines and tabs escaped too (a name, a file name, a reason). */
export function printableLine(text: string): string {
  return printable(text).replace(/\n/g, '\\n').replace(/\t/g, '\\t')
}

/** True when the text holds no character printable() would escape. */
export function isPrintable(text: string): boolean {
  return !UNSAFE_ANY.test(text)
}
