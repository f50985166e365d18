/** HTML text helpers: every value from a plan, a profile or a run log is escaped on its way into the page. */

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char] as string)
}

/** A fragment of trusted HTML (built here, with every inserted value escaped). */
export interface Html {
  readonly html: string
}

export const raw = (html: string): Html => ({ html })

/** A cell or text value: strings and numbers are escaped, fragments kept. */
export type Content = string | number | Html | null

export function content(value: Content): string {
  if (value === null) return '—'
  if (typeof value === 'object') return value.html
  return escapeHtml(String(value))
}

/** `id`s and anchors: lower-case letters, digits and dashes, so that links within the page never break. */
export function slug(...parts: string[]): string {
  return parts
    .join('-')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
}

export interface Table {
  caption: string
  headers: string[]
  rows: Content[][]
  /** Right-align these columns (numbers). */
  numeric?: number[]
}

/** A table with a caption and header cells scoped for screen readers. */
export function renderTable(table: Table, attributes = ''): string {
  const numeric = new Set(table.numeric ?? [])
  const cell = (value: Content, index: number) =>
    `<td${numeric.has(index) ? ' class="num"' : ''}>${content(value)}</td>`
  return [
    `<table${attributes}><caption>${escapeHtml(table.caption)}</caption>`,
    `<thead><tr>${table.headers.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('')}</tr></thead>`,
    `<tbody>${table.rows.map((row) => `<tr>${row.map(cell).join('')}</tr>`).join('\n')}</tbody></table>`,
  ].join('\n')
}

/** Label / value rows, the label as a row header. */
export function renderFacts(caption: string, facts: [string, Content][]): string {
  const rows = facts.map(
    ([label, value]) => `<tr><th scope="row">${escapeHtml(label)}</th><td>${content(value)}</td></tr>`,
  )
  return `<table class="facts"><caption>${escapeHtml(caption)}</caption><tbody>${rows.join('\n')}</tbody></table>`
}

export function section(id: string, title: string, body: string[]): string {
  return `<section id="${id}" aria-labelledby="${id}-title">\n<h2 id="${id}-title">${escapeHtml(title)}</h2>\n${body.join('\n')}\n</section>`
}

export function list(items: Content[]): string {
  return items.length === 0 ? '' : `<ul>${items.map((item) => `<li>${content(item)}</li>`).join('')}</ul>`
}
