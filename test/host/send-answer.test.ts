import { strict as assert } from 'node:assert'
import { sendAnswer, sendAnswerReference } from '../../src/host/api-receipts.js'
import type { QueueResult } from '../../src/delivery/transport.js'
import { ulid } from '../../src/util/ulid.js'

describe('host - send answer (literal against the spread)', () => {
  it('the same fields in the same order for what every transport answers', () => {
    const results: QueueResult[] = [
      { id: ulid(), state: 'queued' }, { id: ulid(), state: 'delivered', seq: 7 }, { id: ulid(), state: 'delivered', seq: 0 },
      { id: ulid(), state: 'queued', seq: undefined }, { state: 'queued', id: ulid() }
    ]
    for (const r of results) {
      for (const receipt of ['queued', 'delivered', 'off'] as const) {
        const fast = sendAnswer(r, receipt)
        const ref = sendAnswerReference(r, receipt)
        assert.deepEqual(fast, ref)
        assert.deepEqual(Object.keys(fast), Object.keys(ref))
        assert.equal(JSON.stringify(fast), JSON.stringify(ref))
      }
    }
  })
})
