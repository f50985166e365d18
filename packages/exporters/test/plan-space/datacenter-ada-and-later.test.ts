import { CATALOGS, catalogMachines, generation } from '../helpers/plan-space.js'
import { describeSweep } from '../helpers/sweep-suite.js'

// Ada (L4, L40S, RTX 6000 Ada), Hopper (H100, H200) and Blackwell (B200, GB200, RTX PRO 6000).
describeSweep('datacenter catalog, Ada and later', () =>
  catalogMachines(generation(CATALOGS.datacenter, 8.9, Number.POSITIVE_INFINITY)),
)
