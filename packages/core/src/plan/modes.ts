import type { Mode } from '../schemas/common.js'

/**
 * The three modes' budgets. Figures are those of the system's source specification (§3): memory share of
 * usable device memory, from-scratch parameter range, micro-batch and sequence ranges, run length, share of
 * TDP, and Chinchilla tokens per parameter.
 */
export interface ModeBudget {
  mode: Mode
  memoryFraction: number
  paramRange: readonly [number, number]
  microBatchRange: readonly [number, number]
  seqRange: readonly [number, number]
  /** Target wall-clock hours [min, max]; the token budget is bounded by max. */
  hoursRange: readonly [number, number]
  tdpFraction: number
  tokensPerParam: number
  /** Checkpoints kept on disk. */
  checkpointsKept: number
}

export const MODE_BUDGETS: Record<Mode, ModeBudget> = {
  conservative: {
    mode: 'conservative',
    memoryFraction: 0.5,
    paramRange: [23e6, 70e6],
    microBatchRange: [2, 8],
    seqRange: [512, 1024],
    hoursRange: [0.5, 2],
    tdpFraction: 0.4,
    tokensPerParam: 12.5,
    checkpointsKept: 5,
  },
  balanced: {
    mode: 'balanced',
    memoryFraction: 0.75,
    paramRange: [70e6, 200e6],
    microBatchRange: [8, 32],
    seqRange: [1024, 2048],
    hoursRange: [2, 6],
    tdpFraction: 0.7,
    tokensPerParam: 20,
    checkpointsKept: 3,
  },
  extreme: {
    mode: 'extreme',
    memoryFraction: 0.95,
    paramRange: [200e6, 70e9],
    microBatchRange: [1, 1024],
    seqRange: [2048, 4096],
    hoursRange: [6, 72],
    tdpFraction: 0.95,
    tokensPerParam: 25,
    checkpointsKept: 2,
  },
}

export const MODES: readonly Mode[] = ['conservative', 'balanced', 'extreme']
