import { strict as assert } from 'node:assert'
import type { RenderedPacket } from '../../src/packet/render.js'
import { mergeMcpJson } from '../../src/mcp/install.js'
import { LoopGuard } from '../../src/mcp/loop-guard.js'
import { parseVerdict } from '../../src/mcp/permission.js'
import { channelEvent } from '../../src/mcp/render.js'

function packet (over: Partial<RenderedPacket>): RenderedPacket {
  return { seq: 7, id: 'ID1', from: 'a', from_id: 'did:key:a', to: 'b', to_id: 'did:key:b', signal: 'MESSAGE', payload: { text: 'hi' }, scope: { files: [], zone: 'project' }, ts: 0, received: 0, ...over }
}

describe('mcp - units', () => {
  it('render - meta keys are identifiers and every value a string', () => {
    const cases: Array<Partial<RenderedPacket>> = [
      {},
      { requires_reply: true, priority: 'high', conversation_id: 'c', in_reply_to: 'X' },
      { signal: 'ESCALATE', payload: { text: 'may I?', options: ['allow', 'deny'] }, conversation_id: 'permission:abcde' },
      { signal: 'HANDOFF', payload: { context: 'ctx', decision: 'go' } }
    ]
    for (const c of cases) {
      const { meta } = channelEvent(packet(c))
      for (const [k, v] of Object.entries(meta)) {
        assert.match(k, /^[A-Za-z0-9_]+$/)
        assert.equal(typeof v, 'string')
      }
    }
    assert.equal(channelEvent(packet({ requires_reply: true })).meta.requires_reply, 'true')
    assert.equal(channelEvent(packet({ signal: 'ESCALATE', payload: { options: ['a'] }, conversation_id: 'permission:abcde' })).meta.permission_request_id, 'abcde')
  })

  it('render - content is the text, or a labelled rendering of the payload', () => {
    assert.equal(channelEvent(packet({})).content, 'hi')
    assert.equal(channelEvent(packet({ signal: 'RETURN', payload: { result: '42' } })).content, '[RETURN] result: 42')
    assert.equal(channelEvent(packet({ signal: 'HANDOFF', payload: { context: 'c', decision: 'd' } })).content, '[HANDOFF] context: c\ndecision: d')
    assert.equal(channelEvent(packet({ signal: 'ESCALATE', payload: { text: 'q', options: ['x', 'y'] } })).content, '[ESCALATE] q\noptions: x | y')
  })

  it('permission - parseVerdict reads allow/deny and the request id', () => {
    const table: Array<[string, ReturnType<typeof parseVerdict>]> = [
      ['allow abcde', { behavior: 'allow', requestId: 'abcde' }],
      ['Deny abcde', { behavior: 'deny', requestId: 'abcde' }],
      ['yes', { behavior: 'allow', requestId: undefined }],
      ['no: qwert', { behavior: 'deny', requestId: 'qwert' }],
      ['sure, go ahead', undefined]
    ]
    for (const [text, want] of table) assert.deepEqual(parseVerdict(packet({ payload: { text } })), want, text)
  })

  it('loop guard - counts replies to unanswered inbound packets per peer and conversation', () => {
    let now = 0
    const g = new LoopGuard({ limit: 2, window: 1000, now: () => now })
    for (let i = 0; i < 2; i++) { g.inbound('p', 'c'); g.check('p', 'c'); g.sent('p', 'c') }
    g.inbound('p', 'c')
    assert.throws(() => g.check('p', 'c'), /loop guard.*limit 2/)
    g.check('p', 'other') // another conversation
    g.check('q', 'c') // a peer that did not write
    now = 1001
    g.check('p', 'c') // the window passed
  })

  it('loop guard - a send that answers nothing is not an automatic reply', () => {
    const g = new LoopGuard({ limit: 1, window: 1000 })
    g.inbound('p', 'c'); g.sent('p', 'c')
    g.check('p', 'c'); g.sent('p', 'c'); g.check('p', 'c')
  })

  it('install - merge keeps other keys and servers', () => {
    const merged = mergeMcpJson({ a: 1, mcpServers: { x: { command: 'x', args: [] } } }, { command: 'amesh', args: ['mcp'] })
    assert.deepEqual(merged, { a: 1, mcpServers: { x: { command: 'x', args: [] }, amesh: { command: 'amesh', args: ['mcp'] } } })
    assert.throws(() => mergeMcpJson([], { command: 'a', args: [] }))
  })
})
