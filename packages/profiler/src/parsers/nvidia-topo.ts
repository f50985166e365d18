import { nonEmptyLines, stripAnsi } from './values.js'

export type TopoLinkKind = 'nvlink' | 'pcie' | 'unknown'

export interface TopoLink {
  a: number
  b: number
  kind: TopoLinkKind
  /** The matrix cell and what it means: "NV12: 12 bonded NVLinks", "PIX: at most one PCIe bridge". */
  detail: string
}

export interface NvidiaTopo {
  gpuCount: number
  links: TopoLink[]
}

const PCIE_PATHS: Record<string, string> = {
  PIX: 'at most one PCIe bridge',
  PXB: 'several PCIe bridges, no host bridge',
  PHB: 'through a PCIe host bridge (CPU)',
  NODE: 'PCIe and the links between host bridges of one NUMA node',
  SYS: 'PCIe and the SMP interconnect between NUMA nodes (QPI/UPI)',
  SOC: 'PCIe and the SMP interconnect between CPU sockets',
}

/**
 * Parses the GPU-to-GPU part of `nvidia-smi topo -m`. Each pair appears once (a < b). NIC columns, CPU/NUMA
 * affinity and the legend are ignored; ANSI underline codes in the header are stripped.
 */
export function parseNvidiaTopo(text: string): NvidiaTopo {
  const lines = nonEmptyLines(stripAnsi(text))
  const headerAt = lines.findIndex(
    (line) => /^\s*GPU0\b/.test(line) || /^\s+GPU0\s/.test(line) || /\tGPU0\b/.test(line),
  )
  if (headerAt < 0) return { gpuCount: 0, links: [] }
  const header = (lines[headerAt] as string).split('\t').map((cell) => cell.trim())
  const gpuColumns = new Map<number, number>()
  header.forEach((cell, column) => {
    const match = /^GPU(\d+)$/.exec(cell)
    if (match) gpuColumns.set(column, Number(match[1]))
  })
  const links: TopoLink[] = []
  let gpuCount = 0
  for (const line of lines.slice(headerAt + 1)) {
    const cells = line.split('\t').map((cell) => cell.trim())
    const rowMatch = /^GPU(\d+)$/.exec(cells[0] ?? '')
    if (!rowMatch) {
      if (/^Legend/i.test(line.trim())) break
      continue
    }
    gpuCount += 1
    const a = Number(rowMatch[1])
    for (const [column, b] of gpuColumns) {
      if (b <= a) continue
      const cell = cells[column]
      if (cell === undefined || cell === '' || cell === 'X') continue
      links.push({ a, b, ...describeLink(cell) })
    }
  }
  return { gpuCount, links }
}

function describeLink(cell: string): { kind: TopoLinkKind; detail: string } {
  const nv = /^NV(\d+)$/.exec(cell)
  if (nv) return { kind: 'nvlink', detail: `${cell}: ${nv[1]} bonded NVLink${nv[1] === '1' ? '' : 's'}` }
  const pcie = PCIE_PATHS[cell]
  if (pcie) return { kind: 'pcie', detail: `${cell}: ${pcie}` }
  return { kind: 'unknown', detail: cell }
}
