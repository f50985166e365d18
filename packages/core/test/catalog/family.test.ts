import { describe, expect, it } from 'vitest'
import { familyOf } from '../../src/catalog/family.js'

describe('familyOf', () => {
  it.each([
    ['NVIDIA GeForce RTX 4090', '8.9', 'rtx40'],
    ['NVIDIA GeForce RTX 4060 Laptop GPU', '8.9', 'rtx40'],
    ['NVIDIA GeForce RTX 5090', '12.0', 'rtx50'],
    ['NVIDIA GeForce RTX 5060 Ti', '12.0', 'rtx50'],
    ['NVIDIA GeForce RTX 3080 Ti', '8.6', 'rtx30'],
    ['NVIDIA GeForce RTX 2070 SUPER', '7.5', 'rtx20'],
    ['NVIDIA GeForce GTX 1650', '7.5', 'rtx20'],
    ['NVIDIA GeForce GTX 980', '5.2', 'rtx20'],
    ['NVIDIA TITAN RTX', '7.5', 'rtx20'],
    ['Tesla K80', '3.7', 'datacenter'],
    ['NVIDIA A40', '8.6', 'datacenter'],
    ['NVIDIA A30', '8.0', 'datacenter'],
    ['NVIDIA GH200 480GB', '9.0', 'datacenter'],
    ['NVIDIA RTX A4000', '8.6', 'datacenter'],
    ['NVIDIA RTX 5000 Ada Generation', '8.9', 'datacenter'],
    ['Quadro RTX 8000', '7.5', 'datacenter'],
    ['NVIDIA RTX PRO 6000 Blackwell Workstation Edition', '12.0', 'datacenter'],
    ['NVIDIA TITAN V', '7.0', 'datacenter'],
  ] as const)('%s (cc %s) -> %s', (name, cc, family) => {
    expect(familyOf('nvidia', name, cc)).toBe(family)
  })

  it('falls back on the compute capability when the name says nothing', () => {
    expect(familyOf('nvidia', 'Graphics Device', '8.6')).toBe('rtx30')
    expect(familyOf('nvidia', 'Graphics Device', '9.0')).toBe('datacenter')
    expect(familyOf('nvidia', 'Graphics Device', '8.9')).toBe('rtx40')
    expect(familyOf('nvidia', 'Graphics Device', '12.0')).toBe('rtx50')
    expect(familyOf('nvidia', 'Graphics Device', '10.0')).toBe('datacenter')
    expect(familyOf('nvidia', 'Graphics Device', null)).toBe('unknown')
  })

  it('maps the other vendors to their packs', () => {
    expect(familyOf('amd', 'AMD Radeon RX 7600', 'gfx1102')).toBe('rdna')
    expect(familyOf('amd', 'AMD Instinct MI300A', 'gfx942')).toBe('rdna')
    expect(familyOf('apple', 'Apple M4 Pro', null)).toBe('apple')
    expect(familyOf('intel', 'Intel Arc A770', null)).toBe('intel')
    expect(familyOf('other', 'ASPEED Graphics Family', null)).toBe('unknown')
  })
})
