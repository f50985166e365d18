import { CATALOGS, catalogMachines } from '../helpers/plan-space.js'
import { describeSweep } from '../helpers/sweep-suite.js'

describeSweep('rtx50 catalog', () => catalogMachines(CATALOGS.rtx50))
