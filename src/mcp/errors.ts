import { AmeshError } from '../util/errors.js'

/** Too many consecutive automatic replies to one peer in one conversation. */
export class LoopGuardError extends AmeshError {
  constructor (message: string) {
    super('LOOP_GUARD', message)
    this.name = 'LoopGuardError'
  }
}
