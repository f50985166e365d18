import { CATALOGS, catalogMachines, generation } from '../helpers/plan-space.js'
import { describeSweep } from '../helpers/sweep-suite.js'

// A100, A10, A10G, RTX A6000.
describeSweep('datacenter catalog, Ampere', () => catalogMachines(generation(CATALOGS.datacenter, 8, 8.9)))
