import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { readText, readValue } from '../system/read.js'

export interface LinuxHostFacts {
  container: boolean
  /** true: a hypervisor is visible; false: bare metal by the evidence; null: cannot tell. */
  virtualized: boolean | null
  hypervisor: string | null
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path)
    return true
  } catch {
    return false
  }
}

const VM_VENDORS =
  /qemu|kvm|vmware|virtualbox|innotek|xen|microsoft corporation|amazon ec2|google|bochs|parallels|openstack|cloud hypervisor|firecracker/i

/**
 * Whether rigfit runs in a container (runtime marker files, PID 1's cgroup, the `container` variable) and on a
 * hypervisor (the CPU's `hypervisor` flag, DMI vendor strings).
 */
export async function readLinuxHost(
  cpuFlags: Set<string>,
  env: NodeJS.ProcessEnv,
  root = '/',
): Promise<LinuxHostFacts> {
  const pid1Cgroup = (await readText(join(root, 'proc/1/cgroup'))) ?? ''
  const container =
    (await exists(join(root, '.dockerenv'))) ||
    (await exists(join(root, 'run/.containerenv'))) ||
    Boolean(env.container) ||
    Boolean(env.KUBERNETES_SERVICE_HOST) ||
    /docker|kubepods|containerd|libpod|lxc/.test(pid1Cgroup)
  const dmi = [
    await readValue(join(root, 'sys/class/dmi/id/sys_vendor')),
    await readValue(join(root, 'sys/class/dmi/id/product_name')),
  ]
    .filter(Boolean)
    .join(' ')
  const dmiHypervisor = VM_VENDORS.exec(dmi)?.[0] ?? null
  const flagged = cpuFlags.has('hypervisor')
  return {
    container,
    virtualized: flagged || dmiHypervisor !== null ? true : cpuFlags.size > 0 && dmi !== '' ? false : null,
    hypervisor: dmiHypervisor,
  }
}
