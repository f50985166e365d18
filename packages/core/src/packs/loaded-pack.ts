import type { PackLayer, PackOrigin, RulePack } from '../schemas/rule-pack.js'

/** A validated, frozen pack with the layer its origin puts it in (a pack cannot choose its own layer). */
export type LoadedPack = Readonly<Omit<RulePack, '$schema'> & { layer: PackLayer; origin: PackOrigin }>
