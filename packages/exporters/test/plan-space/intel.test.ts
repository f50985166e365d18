import { CATALOGS, catalogMachines } from '../helpers/plan-space.js'
import { describeSweep } from '../helpers/sweep-suite.js'

describeSweep('intel catalog', () => catalogMachines(CATALOGS.intel))
