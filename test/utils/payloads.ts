// The payload each signal takes (packet/rules.ts), built from a test's own
// random makers: the fast-path equivalence tests draw their packets this way.
import type { Payload, Signal } from '../../src/packet/types.js'

export interface PayloadMakers {
  /** a text field */
  t: () => string
  /** a context / result / decision value */
  v: () => Payload['context']
  /** an ESCALATE's options */
  options: () => Payload['options']
  /** true or false at random, with this chance of true */
  chance: (p: number) => boolean
  /** one of these, at random */
  pick: <T>(xs: T[]) => T
}

/** A random payload of the shape `signal` requires. */
export function payloadFor (signal: Signal, m: PayloadMakers): Payload {
  const { t, v, options, chance, pick } = m
  switch (signal) {
    case 'SPAWN': return chance(0.5) ? { context: v(), text: t() } : { context: v() }
    case 'RETURN': return { result: v() }
    case 'HANDOFF': return { context: v(), decision: v() }
    case 'ESCALATE': return chance(0.5) ? { options: options(), text: t() } : { options: options() }
    case 'MESSAGE': return pick<Payload>([{ text: t() }, { context: v() }, { text: t(), context: v() }])
    default: return { context: v() }
  }
}
