import { CATALOGS, catalogMachines, generation } from '../helpers/plan-space.js'
import { describeSweep } from '../helpers/sweep-suite.js'

// Pascal, Volta and Turing (P100, V100, T4); datacenter-ampere and datacenter-ada-and-later sweep the rest.
describeSweep('datacenter catalog, before Ampere', () =>
  catalogMachines(generation(CATALOGS.datacenter, 0, 8)),
)
