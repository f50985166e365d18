import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { NetworkPort } from '@rigfit/core'
import { networkPorts } from '../parsers/network-ports.js'
import { listDir, readValue } from '../system/read.js'

/** The machine's network ports from sysfs; `root` is `/sys` (tests point it at a recorded tree). */
export async function readNetworkPorts(root = '/sys'): Promise<NetworkPort[]> {
  const net = join(root, 'class/net')
  const interfaces = await Promise.all(
    (await listDir(net)).map(async (name) => ({
      name,
      type: await readValue(join(net, name, 'type')),
      operstate: await readValue(join(net, name, 'operstate')),
      speed: await readValue(join(net, name, 'speed')),
      physical: existsSync(join(net, name, 'device')),
    })),
  )
  const ib = join(root, 'class/infiniband')
  const rdma = (
    await Promise.all(
      (
        await listDir(ib)
      ).map(async (device) =>
        Promise.all(
          (
            await listDir(join(ib, device, 'ports'))
          ).map(async (port) => {
            const dir = join(ib, device, 'ports', port)
            return {
              device,
              port,
              linkLayer: await readValue(join(dir, 'link_layer')),
              state: await readValue(join(dir, 'state')),
              rate: await readValue(join(dir, 'rate')),
            }
          }),
        ),
      ),
    )
  ).flat()
  return networkPorts(interfaces, rdma)
}
