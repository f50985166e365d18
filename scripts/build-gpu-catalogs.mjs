#!/usr/bin/env node
// Builds each plugin's catalog.json from the GPU spec sheet (scripts/data/gpu-specs.csv; sources and column
// conventions in scripts/data/README.md) and the list prices beside it (scripts/data/gpu-prices.csv).
//   node scripts/build-gpu-catalogs.mjs           write plugins/<family>/catalog.json
//   node scripts/build-gpu-catalogs.mjs --check   exit 1 when a committed catalog differs from what the CSV gives
//   --csv FILE reads another spec sheet, --prices FILE another price sheet.
// --check compares content, not formatting, so a formatter may lay the files out its own way.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const defaultCsv = join(repoRoot, 'scripts', 'data', 'gpu-specs.csv')
const pricesCsv = join(repoRoot, 'scripts', 'data', 'gpu-prices.csv')

/** The nvidia-smi / rocm-smi spellings a name-based match must recognise, beyond the generic ones. */
const TOOL_ALIASES = {
  'v100-sxm2-16gb': ['Tesla V100-SXM2-16GB'],
  'v100-sxm2-32gb': ['Tesla V100-SXM2-32GB'],
  'v100-pcie-16gb': ['Tesla V100-PCIE-16GB'],
  'v100-pcie-32gb': ['Tesla V100-PCIE-32GB'],
  'p100-sxm2-16gb': ['Tesla P100-SXM2-16GB'],
  'p100-pcie-16gb': ['Tesla P100-PCIE-16GB'],
  'a100-40gb-sxm4': ['NVIDIA A100-SXM4-40GB'],
  'a100-40gb-pcie': ['NVIDIA A100-PCIE-40GB'],
  'a100-80gb-sxm4': ['NVIDIA A100-SXM4-80GB'],
  'a100-80gb-pcie': ['NVIDIA A100 80GB PCIe', 'NVIDIA A100-PCIE-80GB'],
  'h100-sxm5-80gb': ['NVIDIA H100 80GB HBM3'],
  'h100-pcie-80gb': ['NVIDIA H100 PCIe'],
  'h200-sxm-141gb': ['NVIDIA H200'],
  b200: ['NVIDIA B200'],
  'rtx-pro-6000-blackwell': ['NVIDIA RTX PRO 6000 Blackwell Workstation Edition'],
  mi250x: ['AMD Instinct MI250X/MI250'],
}

/** Plugin family of a spec-sheet row; null for vendors no bundled plugin covers. */
function familyOf(vendor, series) {
  if (vendor === 'NVIDIA') {
    if (series === 'GeForce RTX 50') return 'rtx50'
    if (series === 'GeForce RTX 40') return 'rtx40'
    if (series === 'GeForce RTX 30') return 'rtx30'
    if (/^GeForce (RTX 20|GTX 16|GTX 10)$/.test(series)) return 'rtx20'
    return 'datacenter'
  }
  if (vendor === 'AMD') return 'rdna'
  if (vendor === 'Apple') return 'apple'
  if (vendor === 'Intel') return 'intel'
  return null
}

export function parseCsv(text) {
  const rows = []
  let row = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (ch === '"') quoted = false
      else field += ch
    } else if (ch === '"') quoted = true
    else if (ch === ',') {
      row.push(field)
      field = ''
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++
      row.push(field)
      if (row.some((cell) => cell !== '')) rows.push(row)
      row = []
      field = ''
    } else field += ch
  }
  if (field !== '' || row.length > 0) {
    row.push(field)
    rows.push(row)
  }
  const [header, ...body] = rows
  return body.map((cells) =>
    Object.fromEntries(header.map((name, i) => [name.trim(), (cells[i] ?? '').trim()])),
  )
}

/** "35?" -> { value: 35, unverified: true }; "n/a" -> { value: null }. */
function number(text) {
  if (text === '' || text === 'n/a') return { value: null, unverified: false }
  const unverified = text.endsWith('?')
  const value = Number(unverified ? text.slice(0, -1) : text)
  if (!Number.isFinite(value)) throw new Error(`not a number: "${text}"`)
  return { value, unverified }
}

/** "yes", "no", "emulated", "yes?" (unverified), "yes (+FP6/FP4)". */
function support(text) {
  const unverified = text.includes('?')
  const word = text.replace('?', '').split(/[\s(]/)[0].toLowerCase()
  if (!['yes', 'no', 'emulated'].includes(word)) throw new Error(`unknown support value "${text}"`)
  return { value: word, unverified }
}

function slug(name) {
  return name
    .toLowerCase()
    .replace(/\((\d+)-core gpu\)/, '$1c')
    .replace(/\([^)]*\)/g, ' ')
    .replace(/\b(geforce|tesla|radeon|instinct|apple|intel|generation)\b/g, ' ')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
}

/** Rows that stand for two boards ("Tesla V100 SXM2 (16/32GB)") become one entry per memory size. */
function expandMemoryVariants(row) {
  const both = row.name.match(/^(.*?)\s*\((\d+)\/(\d+)GB\)$/)
  if (!both) return [{ ...row, name: cleanName(row.name) }]
  const [, base, small, large] = both
  return [small, large].map((gb) => ({
    ...row,
    name: `${base} ${gb}GB`,
    vram_gb: gb,
    source: `${row.source} (the sheet's ${small}/${large}GB row, one entry per memory size)`,
  }))
}

/** Drops spec-sheet annotations that are not part of the product name: "(AWS G5)", "(HGX; 1000 W)". */
function cleanName(name) {
  return name.replace(/\s*\((?!\d+-core GPU\))[^)]*\)\s*$/, '').trim()
}

function aliasesFor(vendor, name, id) {
  const aliases = new Set(TOOL_ALIASES[id] ?? [])
  if (vendor === 'NVIDIA') {
    // nvidia-smi prints GeForce cards without the memory size ("NVIDIA GeForce RTX 4060 Ti"); data-centre boards
    // whose sheet name carries a memory size or form factor get their exact tool spelling from TOOL_ALIASES.
    const plain = name.replace(/\s+\d+GB$/, '')
    if (name.startsWith('GeForce') || !/\d+GB|SXM|PCIe|^Tesla /.test(name)) aliases.add(`NVIDIA ${plain}`)
  } else if (vendor === 'AMD') {
    aliases.add(`AMD ${name}`)
  } else if (vendor === 'Apple') {
    aliases.add(name.replace(/\s*\(\d+-core GPU\)$/, ''))
  } else if (vendor === 'Intel') {
    // xpu-smi and sysfs print "Intel(R) Arc(TM) B580 Graphics"; the trademarks and "Graphics" are name noise.
    aliases.add(`Intel(R) Arc(TM) ${name.replace(/^Intel Arc\s+/, '').replace(/\s+\d+GB$/, '')} Graphics`)
  }
  aliases.delete(name)
  return [...aliases].sort()
}

function toEntry(row) {
  const family = familyOf(row.vendor, row.family)
  const unverified = []
  const read = (field, parsed) => {
    if (parsed.unverified) unverified.push(field)
    return parsed.value
  }
  const id = slug(row.name)
  const fp16TensorTflops = read('fp16TensorTflops', number(row.fp16_tensor_tflops_dense))
  const isAppleOrRadeon = row.vendor === 'Apple' || (row.vendor === 'AMD' && row.family !== 'Instinct')
  return {
    aliases: aliasesFor(row.vendor, row.name, id),
    arch: row.arch,
    bf16: read('bf16', support(row.bf16_supported)),
    computeCapability: row.compute_capability,
    devicesPerBoard: /2 GCDs/.test(row.arch) ? 2 : 1,
    family,
    fp16TensorTflops,
    fp32Tflops: read('fp32Tflops', number(row.fp32_tflops)),
    fp8: read('fp8', support(row.fp8_supported)),
    id,
    memoryBandwidthGBs: read('memoryBandwidthGBs', number(row.mem_bandwidth_gbs)),
    name: row.name,
    series: row.family,
    source: row.source,
    tdpWatts: read('tdpWatts', number(row.tdp_w)),
    tensorCores: fp16TensorTflops !== null && !isAppleOrRadeon,
    tf32: read('tf32', support(row.tf32_supported)),
    unifiedMemory: row.vendor === 'Apple',
    unverified,
    vendor: row.vendor.toLowerCase(),
    vramGB: read('vramGB', number(row.vram_gb)),
  }
}

/** Price sheet text -> Map<catalog id, listPrice>; a price must be a positive number seen on a dated day. */
export function listPrices(csvText) {
  const prices = new Map()
  for (const row of parseCsv(csvText)) {
    const usdPerGpuHour = Number(row.usd_per_gpu_hour)
    if (!(usdPerGpuHour > 0))
      throw new Error(`gpu-prices.csv ${row.gpu_id}: not a price: "${row.usd_per_gpu_hour}"`)
    if (!/^\d{4}-\d{2}-\d{2}$/.test(row.seen)) throw new Error(`gpu-prices.csv ${row.gpu_id}: no date seen`)
    if (prices.has(row.gpu_id)) throw new Error(`gpu-prices.csv ${row.gpu_id}: priced twice`)
    const price = {
      offer: row.offer,
      provider: row.provider,
      seen: row.seen,
      source: row.source,
      usdPerGpuHour,
    }
    prices.set(row.gpu_id, row.via ? { ...price, via: row.via } : price)
  }
  return prices
}

/**
 * CSV text (and the price sheet's) -> { catalogs: Map<family, catalog>, skipped: string[] }. Pure, so a test can
 * call it. A price for a GPU the spec sheet does not have is an error.
 */
export function buildCatalogs(csvText, pricesText = '') {
  const catalogs = new Map()
  const skipped = []
  const prices = listPrices(pricesText)
  for (const row of parseCsv(csvText).flatMap(expandMemoryVariants)) {
    const family = familyOf(row.vendor, row.family)
    if (!family) {
      skipped.push(`${row.vendor} ${row.name}`)
      continue
    }
    if (!catalogs.has(family)) catalogs.set(family, { entries: [], family, schemaVersion: 1 })
    const entry = toEntry(row)
    const price = prices.get(entry.id)
    prices.delete(entry.id)
    catalogs.get(family).entries.push(price ? withSortedKeys({ ...entry, listPrice: price }) : entry)
  }
  if (prices.size > 0)
    throw new Error(`gpu-prices.csv prices GPUs the spec sheet lacks: ${[...prices.keys()].join(', ')}`)
  return { catalogs, skipped }
}

/** The object with its keys in order: the packs' contract suite holds every catalog's JSON keys sorted. */
function withSortedKeys(object) {
  return Object.fromEntries(Object.entries(object).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

export function renderCatalog(catalog) {
  return `${JSON.stringify(catalog, null, 2)}\n`
}

function sameJson(a, b) {
  try {
    return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b))
  } catch {
    return false
  }
}

function main() {
  const check = process.argv.includes('--check')
  const csvFlag = process.argv.indexOf('--csv')
  const csvPath = csvFlag > 0 && process.argv[csvFlag + 1] ? resolve(process.argv[csvFlag + 1]) : defaultCsv
  if (!existsSync(csvPath)) {
    console.error(`GPU spec sheet not found at ${csvPath}; pass its path with --csv FILE.`)
    process.exit(2)
  }
  const pricesFlag = process.argv.indexOf('--prices')
  const pricesPath =
    pricesFlag > 0 && process.argv[pricesFlag + 1] ? resolve(process.argv[pricesFlag + 1]) : pricesCsv
  const prices = existsSync(pricesPath) ? readFileSync(pricesPath, 'utf8') : ''
  let built
  try {
    built = buildCatalogs(readFileSync(csvPath, 'utf8'), prices)
  } catch (error) {
    console.error(`${error.message}; fix ${pricesPath} or ${csvPath}.`)
    process.exit(1)
  }
  const { catalogs, skipped } = built
  const stale = []
  for (const [family, catalog] of catalogs) {
    const file = join(repoRoot, 'plugins', family, 'catalog.json')
    const text = renderCatalog(catalog)
    const current = existsSync(file) ? readFileSync(file, 'utf8') : null
    const same = current !== null && sameJson(current, text)
    if (check) {
      if (!same) stale.push(file)
      continue
    }
    if (same) {
      console.log(`unchanged plugins/${family}/catalog.json (${catalog.entries.length} GPUs)`)
      continue
    }
    const tmp = `${file}.${process.pid}.tmp`
    writeFileSync(tmp, text)
    renameSync(tmp, file)
    console.log(`wrote plugins/${family}/catalog.json (${catalog.entries.length} GPUs)`)
  }
  if (skipped.length > 0) console.log(`no bundled plugin for: ${skipped.join(', ')}`)
  if (check) {
    if (stale.length > 0) {
      console.error(`stale GPU catalogs (run node scripts/build-gpu-catalogs.mjs):\n  ${stale.join('\n  ')}`)
      process.exit(1)
    }
    console.log('GPU catalogs are current')
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
