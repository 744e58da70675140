// The Claude Code contract of `amesh mcp`, as units: instructions within
// Claude Code's 2,048-character cap for the longest names, the re-push plan.
import { strict as assert } from 'node:assert'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { RepushPlan } from '../../src/mcp/consumption.js'
import { INSTRUCTIONS_MAX, instructionsFor } from '../../src/mcp/instructions.js'
import { checkNodeName } from '../../src/store/nodes.js'

describe('mcp - the Claude Code contract', () => {
  it('instructions - at most 2,048 characters for the longest node and approver names, ids and loop settings', () => {
    const longest = 'n'.repeat(64)
    checkNodeName(longest) // the longest name a node may have
    assert.throws(() => checkNodeName(longest + 'n'))
    const text = instructionsFor({ node: longest, nodeId: generateNodeKey().id, hostPeerId: '12D3KooW' + 'x'.repeat(44), approver: 'a'.repeat(64), loopLimit: 1_000_000, loopWindow: 365 * 24 * 3600 * 1000 })
    assert.equal(INSTRUCTIONS_MAX, 2048)
    assert.ok(text.length <= INSTRUCTIONS_MAX, `instructions are ${text.length} characters`)
    assert.match(text, /loop guard/, 'the last sentence is inside the cap')
    assert.match(text, /spawn/)
    assert.match(text, /ack\(/)
  })

  it('re-push - every unread message in order, the backlog bounded, live ones always', () => {
    const plan = new RepushPlan({ attachment: 'x', cursor: 3, last: 10, unread: 5, read_above: [5, 7] }, 2)
    const pushed = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].filter((s) => plan.shouldPush(s))
    assert.deepEqual(pushed, [4, 6, 11, 12])
    assert.equal(plan.held, 3)
  })
})
