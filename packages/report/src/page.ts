import { escapeHtml } from './html.js'

/**
 * The page around the sections. Everything is inline (styles and SVG), there is no script and no URL the browser
 * would fetch: the file reads the same offline, attached to a bug report, or with JavaScript switched off.
 */
const STYLE = `
:root { color-scheme: light dark; --fg: #1b1f24; --bg: #ffffff; --muted: #5b636e; --line: #d0d5db; --panel: #f5f7f9; --link: #0b57d0; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6e8eb; --bg: #15181c; --muted: #a0a8b3; --line: #3a4049; --panel: #1e2227; --link: #8ab4f8; }
}
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1200px; padding: 1.5rem; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 1.6rem; margin: 0 0 .25rem; }
h2 { font-size: 1.3rem; border-bottom: 1px solid var(--line); padding-bottom: .25rem; margin-top: 2rem; }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .5rem; }
a { color: var(--link); }
.meta, .note, figcaption p { color: var(--muted); }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { border: 1px solid var(--line); padding: .2rem .5rem; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
thead th, .facts th { background: var(--panel); }
.scroll { max-width: 100%; overflow-x: auto; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr)); gap: 1rem; }
figure.chart { margin: 1rem 0; padding: .75rem; border: 1px solid var(--line); border-radius: 6px; background: var(--bg); min-width: 0; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
figcaption { font-weight: normal; }
details { margin-top: .5rem; }
summary { cursor: pointer; color: var(--muted); }
.explain { border-left: 3px solid var(--line); padding: .1rem .75rem; margin: .5rem 0; }
.explain:target { border-left-color: var(--link); background: var(--panel); }
code { font-size: .85rem; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  figure.chart, table, .explain { break-inside: avoid; }
  details > *:not(summary) { display: block; }
  a { color: inherit; }
}
`

export interface PageOptions {
  title: string
  /** One line under the title: what the page is of, when and by which rigfit. */
  subtitle: string
  /** plans, estimate, run: written on <body> so that tools (and tests) know which kind of page it is. */
  kinds: string[]
  sections: string[]
}

export function renderPage(options: PageOptions): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="generator" content="rigfit">
<title>${escapeHtml(options.title)}</title>
<style>${STYLE}</style>
</head>
<body data-report="${escapeHtml(options.kinds.join(' '))}">
<header>
<h1>${escapeHtml(options.title)}</h1>
<p class="meta">${escapeHtml(options.subtitle)}</p>
</header>
<main>
${options.sections.join('\n')}
</main>
</body>
</html>
`
}
