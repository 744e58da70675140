// Signal destinations enforced by the receiving host: a RETURN that answers
// nothing and a HANDOFF outside the lineage, written straight onto the packet
// stream (so no sender-side check ran), are refused with SIGNAL_DESTINATION
// by a host on the default policy and accepted by a host with the policy off.
import { strict as assert } from 'node:assert'
import { encodeFrame } from '../../src/delivery/frame.js'
import { encodePacket } from '../../src/packet/codec.js'
import type { Packet } from '../../src/packet/types.js'
import type { RunningHost as Host } from '../../src/host/components.js'
import { ulid } from '../../src/util/ulid.js'
import { jsonLines, startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { rawPacketStream, startInProcessHost } from '../utils/in-process.js'

describe('authz e2e - signal destinations on the receiving host', function () {
  this.timeout(120_000)
  let strict: TestHost
  let open: TestHost
  let x: { host: Host, stop: () => Promise<void> }
  let mallory: string
  const bob: Record<string, string> = {}

  before(async () => {
    strict = await startHost()
    open = await startHost({ config: { signal_destinations: 'off' } })
    x = await startInProcessHost()
    mallory = (await x.host.registry.add('mallory')).record.id
    for (const h of [strict, open]) {
      bob[h.home] = (JSON.parse(await h.ok(['node', 'add', 'bob', '--json'])) as { id: string }).id
      await x.host.keeper.join(h.addr)
      // bob lets mallory send every signal: only the destination rule is left to refuse
      await h.ok(['grant', '--as', 'bob', '--to', mallory])
      await waitFor(async () => x.host.acl.store.heldFor(mallory, bob[h.home]).length > 0, 10_000, 'grant hand-off')
    }
  })

  after(async () => {
    await x?.stop()
    await open?.cleanup()
    await strict?.cleanup()
  })

  function crafted (h: TestHost, over: Partial<Packet>): Uint8Array {
    const to = bob[h.home]
    return encodePacket({ id: ulid(), from: mallory, to, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'hi' }, ts: Date.now(), proof: { grants: x.host.acl.store.heldFor(mallory, to)[0].chain }, ...over })
  }

  async function codes (h: TestHost): Promise<string[]> {
    const s = await rawPacketStream(x.host, h.addr)
    try {
      s.write(encodeFrame({ t: 'p', b: 1, p: [
        crafted(h, { signal: 'RETURN', payload: { result: 'answers nothing' }, in_reply_to: ulid() }),
        crafted(h, { signal: 'RETURN', payload: { result: 'no in_reply_to' } }),
        crafted(h, { signal: 'HANDOFF', payload: { context: { next: 'you' }, decision: 'go' } }),
        crafted(h, { payload: { text: 'a plain message' } })
      ] }))
      const ack = await s.next()
      assert.ok(ack !== 'closed' && ack.t === 'a')
      return ack.r.map((r) => ('c' in r ? r.c : 'ok'))
    } finally {
      s.close()
    }
  }

  it('refuses a RETURN that answers nothing and a HANDOFF outside the lineage with SIGNAL_DESTINATION; nothing enters the inbox', async () => {
    assert.deepEqual(await codes(strict), ['SIGNAL_DESTINATION', 'SIGNAL_DESTINATION', 'SIGNAL_DESTINATION', 'ok'])
    const inbox = jsonLines<{ signal: string }>(await strict.ok(['inbox', 'bob', '--json', '--after', '0']))
    assert.deepEqual(inbox.map((p) => p.signal).filter((s) => s !== 'ERROR'), ['MESSAGE'])
  })

  it('with signal_destinations: off in config they pass', async () => {
    assert.deepEqual(await codes(open), ['ok', 'ok', 'ok', 'ok'])
    const inbox = jsonLines<{ signal: string }>(await open.ok(['inbox', 'bob', '--json', '--after', '0']))
    assert.deepEqual(inbox.map((p) => p.signal).filter((s) => s !== 'ERROR'), ['RETURN', 'RETURN', 'HANDOFF', 'MESSAGE'])
  })

  it('the sending host refuses the same sends first, naming SIGNAL_DESTINATION', async () => {
    await strict.ok(['node', 'add', 'bob2'])
    const r = await strict.run(['send', '--as', 'bob', 'bob2', 'done', '--signal', 'RETURN'])
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /SIGNAL_DESTINATION/)
    const h = await strict.run(['send', '--as', 'bob', 'bob2', 'ctx', '--signal', 'HANDOFF', '--payload', '{"decision":"d"}'])
    assert.match(h.stderr, /SIGNAL_DESTINATION/)
  })
})
