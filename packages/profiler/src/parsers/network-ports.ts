import type { NetworkPort } from '@rigfit/core'

/** What /sys/class/net/<name>/ says of one interface. */
export interface NetInterfaceFacts {
  name: string
  /** ARPHRD type: 1 Ethernet, 32 InfiniBand (IPoIB), 772 loopback. */
  type: string | null
  operstate: string | null
  /** Mbit/s; -1 or absent when the link is down or the driver does not say. */
  speed: string | null
  /** A `device` link: a physical NIC, not a bridge, veth, tunnel or loopback. */
  physical: boolean
}

/** What /sys/class/infiniband/<device>/ports/<n>/ says of one RDMA port. */
export interface RdmaPortFacts {
  device: string
  port: string
  /** `InfiniBand`, or `Ethernet` for RoCE. */
  linkLayer: string | null
  /** `4: ACTIVE` when up. */
  state: string | null
  /** `200 Gb/sec (4X HDR)`. */
  rate: string | null
}

const ARPHRD_ETHER = '1'

function rateGbps(rate: string | null): number | null {
  const match = /^([\d.]+)\s*Gb\/sec/i.exec(rate?.trim() ?? '')
  const value = match ? Number(match[1]) : Number.NaN
  return Number.isFinite(value) && value > 0 ? value : null
}

function speedGbps(speed: string | null): number | null {
  const mbits = Number(speed)
  return speed !== null && Number.isFinite(mbits) && mbits > 0 ? mbits / 1000 : null
}

/**
 * The ports a node could reach other nodes through: every RDMA port (InfiniBand, or RoCE when its link layer is
 * Ethernet) and every physical Ethernet interface. IPoIB interfaces are the InfiniBand ports again and are left
 * to the RDMA entries; loopback and virtual interfaces carry nothing between nodes.
 */
export function networkPorts(interfaces: NetInterfaceFacts[], rdma: RdmaPortFacts[]): NetworkPort[] {
  const ports: NetworkPort[] = rdma.map((entry) => {
    const up = /\bACTIVE\b/i.test(entry.state ?? '')
    return {
      name: `${entry.device}/${entry.port}`,
      kind: entry.linkLayer?.trim().toLowerCase() === 'ethernet' ? 'roce' : 'infiniband',
      speedGbps: up ? rateGbps(entry.rate) : null,
      up,
    }
  })
  for (const entry of interfaces) {
    if (!entry.physical || entry.type?.trim() !== ARPHRD_ETHER) continue
    const up = entry.operstate?.trim() === 'up'
    ports.push({ name: entry.name, kind: 'ethernet', speedGbps: up ? speedGbps(entry.speed) : null, up })
  }
  return ports
}
