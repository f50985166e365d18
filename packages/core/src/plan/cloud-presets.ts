/**
 * Cloud instances a user can plan for without owning them (`--instance`). Hardware from the providers'
 * instance pages (each preset's `note` names its source; GPUs, vCPUs, cores and memory were checked against
 * them); prices are on-demand list prices per hour in US regions, which change: `--price-per-hour` overrides
 * them. The vCPUs are what the plan divides between the ranks of a node (threads, dataloader workers).
 */
export interface CloudPreset {
  id: string
  provider: 'aws' | 'gcp' | 'azure'
  /** A GPU name the catalog matcher resolves. */
  gpu: string
  gpus: number
  /** Logical CPUs of the instance, as the provider lists them. */
  vcpus: number
  /** Physical cores behind them: vCPUs / 2 where the provider runs two threads per core, all of them where SMT is off. */
  physicalCores: number
  ramGiB: number
  interconnect: 'nvlink' | 'pcie' | 'none'
  /** The network between instances of a multi-node job, as the provider lists it. */
  network: 'infiniband' | 'efa' | 'ethernet'
  pricePerHour: number
  note: string
}

export const CLOUD_PRESETS: readonly CloudPreset[] = [
  {
    id: 'g5.xlarge',
    provider: 'aws',
    gpu: 'NVIDIA A10G',
    gpus: 1,
    vcpus: 4,
    physicalCores: 2,
    ramGiB: 16,
    interconnect: 'none',
    network: 'ethernet',
    pricePerHour: 1.006,
    note: 'AWS EC2 G5 instance page: 1x A10G 24 GB, 4 vCPU (2 threads per core), 16 GiB; network: up to 10 Gbps',
  },
  {
    id: 'g5.2xlarge',
    provider: 'aws',
    gpu: 'NVIDIA A10G',
    gpus: 1,
    vcpus: 8,
    physicalCores: 4,
    ramGiB: 32,
    interconnect: 'none',
    network: 'ethernet',
    pricePerHour: 1.212,
    note: 'AWS EC2 G5 instance page: 1x A10G 24 GB, 8 vCPU (2 threads per core), 32 GiB; network: up to 10 Gbps',
  },
  {
    id: 'p4d.24xlarge',
    provider: 'aws',
    gpu: 'NVIDIA A100-SXM4-40GB',
    gpus: 8,
    vcpus: 96,
    physicalCores: 48,
    ramGiB: 1152,
    interconnect: 'nvlink',
    network: 'efa',
    pricePerHour: 32.77,
    note: 'AWS EC2 P4d instance page: 8x A100 40 GB SXM4 with NVSwitch, 96 vCPU (48 cores, 2 threads per core), 1152 GiB; network: 400 Gbps EFA with GPUDirect RDMA',
  },
  {
    id: 'a2-megagpu-16g',
    provider: 'gcp',
    gpu: 'NVIDIA A100-SXM4-40GB',
    gpus: 16,
    vcpus: 96,
    physicalCores: 48,
    ramGiB: 1360,
    interconnect: 'nvlink',
    network: 'ethernet',
    pricePerHour: 55.74,
    note: 'Google Cloud A2 machine types: 16x A100 40 GB with NVSwitch, 96 vCPU (2 per core), 1360 GB; network: 100 Gbps',
  },
  {
    id: 'NC6s_v3',
    provider: 'azure',
    gpu: 'Tesla V100-PCIE-16GB',
    gpus: 1,
    vcpus: 6,
    physicalCores: 6,
    ramGiB: 112,
    interconnect: 'none',
    network: 'ethernet',
    pricePerHour: 3.06,
    note: 'Azure NCv3 series: 1x V100 16 GB, 6 vCPU (Azure lists vCores of the Xeon E5-2690 v4), 112 GiB; network: no InfiniBand on NCv3',
  },
  {
    id: 'ND96amsr_A100_v4',
    provider: 'azure',
    gpu: 'NVIDIA A100-SXM4-80GB',
    gpus: 8,
    vcpus: 96,
    physicalCores: 96,
    ramGiB: 1900,
    interconnect: 'nvlink',
    network: 'infiniband',
    pricePerHour: 32.77,
    note: 'Azure NDm A100 v4 series: 8x A100 80 GB SXM4 with NVLink 3.0, 96 vCPU (96 physical AMD EPYC 7V12 cores), 1900 GiB; network: 8x 200 Gb/s HDR InfiniBand',
  },
]

export function findCloudPreset(id: string): CloudPreset | undefined {
  const wanted = id.toLowerCase().replace(/^standard_/, '')
  return CLOUD_PRESETS.find((preset) => preset.id.toLowerCase() === wanted)
}
