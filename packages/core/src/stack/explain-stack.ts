import type { StackMechanism, StackRef } from '../schemas/stack.js'
import { resolveStack } from './resolve-stack.js'
import { formatStackRef } from './stack-ref.js'

export interface StackMechanismExplanation {
  mechanism: StackMechanism
  value: unknown
  /** The stack release whose table row decided it. */
  stack: string
  says: string
  source: string
}

/** Each mechanism the stack decides, its value, and the stack table row (with its source) behind it. */
export function explainStack(ref: StackRef): StackMechanismExplanation[] {
  const { mechanisms, facts } = resolveStack(ref)
  return (Object.keys(mechanisms) as StackMechanism[]).map((mechanism) => ({
    mechanism,
    value: mechanisms[mechanism],
    stack: formatStackRef(ref),
    says: facts[mechanism].says,
    source: facts[mechanism].source,
  }))
}
