import { strict as assert } from 'node:assert'
import { multiaddr } from '@multiformats/multiaddr'
import { peerIdFromString } from '@libp2p/peer-id'
import { encodeLineage, encodeRevocation, encodeToken, issueLineage, issueRevocation, issueToken, tokenId, type SignedLineage } from '../../src/acl/index.js'
import { encodeFrame } from '../../src/delivery/frame.js'
import type { RunningHost as Host } from '../../src/host/components.js'
import { encodePacket } from '../../src/packet/codec.js'
import type { Packet } from '../../src/packet/types.js'
import { ulid } from '../../src/util/ulid.js'
import { jsonLines, startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { rawPacketStream, startInProcessHost } from '../utils/in-process.js'
import { pushRevocations } from '../utils/junk.js'

interface Row { seq: number, id: string, from: string, signal: string, payload: { text?: string, context?: string } }

async function inbox (h: TestHost, node: string): Promise<Row[]> {
  return jsonLines<Row>(await h.ok(['inbox', node, '--json', '--after', '0', '--limit', '10000']))
}

async function send (h: TestHost, as: string, to: string, text: string, extra: string[] = []): Promise<{ code: number, stderr: string, id?: string }> {
  const r = await h.run(['send', '--as', as, to, text, '--json', ...extra])
  return { code: r.code, stderr: r.stderr, id: r.code === 0 ? (JSON.parse(r.stdout) as { id: string }).id : undefined }
}

async function idOf (h: TestHost, name: string, parent?: string): Promise<string> {
  const out = await h.ok(['node', 'add', name, '--json', ...(parent !== undefined ? ['--parent', parent] : [])])
  return (JSON.parse(out) as { id: string }).id
}

async function texts (h: TestHost, node: string): Promise<Array<string | undefined>> {
  return (await inbox(h, node)).filter((r) => r.signal !== 'ERROR').map((r) => r.payload.text)
}

describe('e2e permissions - lineage, groups, grants, blocks, profiles', function () {
  this.timeout(180_000)
  let h1: TestHost
  let h2: TestHost

  before(async () => {
    h1 = await startHost({ config: { policy: { max_depth: 3 } } })
    h2 = await startHost({ peers: [h1.addr] })
  })

  after(async () => {
    await h1?.cleanup()
    await h2?.cleanup()
  })

  it('groups: parent <-> child and siblings deliver with no grant; cousins and strangers are denied with the reason and the grant command', async () => {
    await idOf(h1, 'lead')
    await idOf(h1, 'w1', 'lead')
    await idOf(h1, 'w2', 'lead')
    await idOf(h1, 'lead2')
    await idOf(h1, 'c2', 'lead2')
    assert.equal((await send(h1, 'w1', 'lead', 'w1 to lead')).code, 0)
    assert.equal((await send(h1, 'lead', 'w1', 'lead to w1')).code, 0)
    assert.equal((await send(h1, 'w1', 'w2', 'w1 to w2')).code, 0)
    assert.equal((await send(h1, 'w2', 'w1', 'w2 to w1')).code, 0)
    assert.deepEqual(await texts(h1, 'lead'), ['w1 to lead'])
    assert.deepEqual(await texts(h1, 'w1'), ['lead to w1', 'w2 to w1'])
    assert.deepEqual(await texts(h1, 'w2'), ['w1 to w2'])
    const cousin = await send(h1, 'w1', 'c2', 'cousin')
    assert.notEqual(cousin.code, 0)
    assert.match(cousin.stderr, /NO_GRANT/)
    assert.match(cousin.stderr, /amesh grant --as c2 --to w1 --signals MESSAGE/)
    await idOf(h2, 'stranger')
    await waitFor(async () => (await h2.ok(['nodes', '--json'])).includes('"lead"'), 20_000, 'h2 learns lead')
    const stranger = await send(h2, 'stranger', 'lead', 'hello')
    assert.notEqual(stranger.code, 0)
    assert.match(stranger.stderr, /NO_GRANT.*amesh grant --as lead --to stranger --signals MESSAGE/)
    assert.deepEqual(await texts(h1, 'c2'), [])
    assert.deepEqual(await texts(h1, 'lead'), ['w1 to lead'])
  })

  it('depth policy: raised to 3, a 4-level tree works with the group rule at each level only', async () => {
    await idOf(h1, 'g1', 'w1')
    await idOf(h1, 'g2', 'g1')
    const refused = await h1.run(['node', 'add', 'g3', '--parent', 'g2'])
    assert.notEqual(refused.code, 0)
    assert.match(refused.stderr, /policy\.max_depth/)
    assert.equal((await send(h1, 'g2', 'g1', 'up one')).code, 0)
    assert.equal((await send(h1, 'g1', 'w1', 'up two')).code, 0)
    assert.equal((await send(h1, 'w1', 'lead', 'up three')).code, 0)
    const skip = await send(h1, 'g2', 'w1', 'skip a level')
    assert.match(skip.stderr, /NO_GRANT/)
    assert.deepEqual(await texts(h1, 'g1'), ['up one'])
  })

  it('re-parenting an existing node is refused', async () => {
    const r = await h1.run(['node', 'add', 'w2', '--parent', 'lead2'])
    assert.notEqual(r.code, 0)
    assert.match(r.stderr, /re-parenting/)
  })

  it('a grant lets exactly its signals and zones through, across hosts', async () => {
    const g = JSON.parse(await h1.ok(['grant', '--as', 'lead', '--to', 'stranger', '--signals', 'MESSAGE', '--zones', 'project', '--json'])) as { token_id: string, handed: boolean }
    assert.equal(g.handed, true)
    await waitFor(async () => (await h2.ok(['grants', '--json'])).includes(g.token_id), 10_000, 'grant held on h2')
    const okSend = await send(h2, 'stranger', 'lead', 'granted hello')
    assert.equal(okSend.code, 0)
    await waitFor(async () => (await texts(h1, 'lead')).includes('granted hello'), 20_000, 'granted message')
    const wrongSignal = await send(h2, 'stranger', 'lead', 'blocked on you', ['--signal', 'BLOCKED_ON'])
    assert.match(wrongSignal.stderr, /TOKEN_SIGNAL/)
    const wrongZone = await send(h2, 'stranger', 'lead', 'kernel stuff', ['--zone', 'kernel'])
    assert.match(wrongZone.stderr, /TOKEN_ZONE/)
  })

  it('revoke by a node that is not an issuer in the chain is refused with NOT_ISSUER and changes no listing', async () => {
    const g = JSON.parse(await h1.ok(['grant', '--as', 'lead', '--to', 'stranger', '--signals', 'MESSAGE', '--json'])) as { token_id: string }
    await waitFor(async () => (await h2.ok(['grants', '--json'])).includes(g.token_id), 10_000, 'grant held on h2')
    const before1 = await h1.ok(['grants', '--json'])
    const before2 = await h2.ok(['grants', '--json'])
    const byOther = await h1.run(['revoke', g.token_id, '--as', 'w2'])
    assert.notEqual(byOther.code, 0)
    assert.match(byOther.stderr, /NOT_ISSUER/)
    const byHolder = await h2.run(['revoke', g.token_id, '--as', 'stranger'])
    assert.notEqual(byHolder.code, 0)
    assert.match(byHolder.stderr, /NOT_ISSUER/)
    assert.equal(await h1.ok(['grants', '--json']), before1, 'no listing changed on the issuer\'s host')
    assert.equal(await h2.ok(['grants', '--json']), before2, 'no listing changed on the holder\'s host')
  })

  it('a grant stops at its expiry', async () => {
    await idOf(h2, 'brief')
    await waitFor(async () => (await h1.ok(['nodes', '--json'])).includes('"brief"'), 20_000, 'h1 learns brief')
    const g = JSON.parse(await h1.ok(['grant', '--as', 'lead', '--to', 'brief', '--expires', '10s', '--json'])) as { token_id: string, expires: string }
    await waitFor(async () => (await h2.ok(['grants', '--json'])).includes(g.token_id), 10_000, 'grant held')
    assert.equal((await send(h2, 'brief', 'lead', 'in time')).code, 0)
    // wait past the token's own expiry (a loaded machine can take seconds to
    // run the grant command, so a clock read before it is too early)
    const expires = Date.parse(g.expires)
    assert.ok(Number.isFinite(expires), 'the grant names its expiry')
    await new Promise((r) => setTimeout(r, Math.max(0, expires + 500 - Date.now())))
    const late = await send(h2, 'brief', 'lead', 'too late')
    assert.match(late.stderr, /TOKEN_EXPIRED/)
  })

  it('revocation reaches a host that was offline when it was issued, and stops a delegated chain', async () => {
    const h3 = await startHost({ peers: [h1.addr] })
    try {
      await idOf(h3, 'carol')
      await waitFor(async () => (await h1.ok(['nodes', '--json'])).includes('"carol"') && (await h3.ok(['nodes', '--json'])).includes('"stranger"'), 20_000, 'cards spread')
      const root = JSON.parse(await h1.ok(['grant', '--as', 'lead', '--to', 'stranger', '--signals', 'MESSAGE,ESCALATE', '--json'])) as { token_id: string }
      await waitFor(async () => (await h2.ok(['grants', '--json'])).includes(root.token_id), 10_000, 'root grant held')
      const wider = await h2.run(['grant', '--as', 'stranger', '--to', 'carol', '--delegate', root.token_id, '--signals', 'MESSAGE,ESCALATE,RETURN'])
      assert.match(wider.stderr, /widen/)
      const child = JSON.parse(await h2.ok(['grant', '--as', 'stranger', '--to', 'carol', '--delegate', root.token_id, '--signals', 'MESSAGE', '--json'])) as { token_id: string, chain_length: number }
      assert.equal(child.chain_length, 2)
      await waitFor(async () => (await h3.ok(['grants', '--json'])).includes(child.token_id), 10_000, 'delegated grant held on h3')
      assert.equal((await send(h3, 'carol', 'lead', 'via delegation')).code, 0)
      await waitFor(async () => (await texts(h1, 'lead')).includes('via delegation'), 20_000, 'delegated message')
      await h3.stop()
      await h1.ok(['revoke', root.token_id, '--as', 'lead'])
      await h3.start()
      const held = await waitFor(async () => {
        const gs = JSON.parse(await h3.ok(['grants', '--json'])) as { held: Array<{ token_id: string, revoked: boolean }> }
        return gs.held.find((g) => g.token_id === child.token_id && g.revoked)
      }, 20_000, 'h3 to learn the revocation')
      assert.ok(held)
      const after = await send(h3, 'carol', 'lead', 'after revoke')
      assert.match(after.stderr, /TOKEN_REVOKED/)
      const onH2 = JSON.parse(await h2.ok(['grants', '--json'])) as { held: Array<{ token_id: string, revoked: boolean }> }
      assert.equal(onH2.held.find((g) => g.token_id === root.token_id)?.revoked, true, 'the connected host learnt it too')
    } finally {
      await h3.cleanup()
    }
  })

  it('a block beats a grant and a group rule, with no hint; unblock restores', async () => {
    await h1.ok(['block', '--as', 'lead', 'w1'])
    const grouped = await send(h1, 'w1', 'lead', 'blocked group')
    assert.match(grouped.stderr, /NO_GRANT/)
    assert.doesNotMatch(grouped.stderr, /block/i)
    const g = JSON.parse(await h1.ok(['grant', '--as', 'lead', '--to', 'brief', '--json'])) as { token_id: string }
    await waitFor(async () => (await h2.ok(['grants', '--json'])).includes(g.token_id), 10_000, 'grant held')
    await h1.ok(['block', '--as', 'lead', 'brief'])
    const before = (await texts(h1, 'lead')).length
    const queued = await send(h2, 'brief', 'lead', 'blocked granted')
    assert.equal(queued.code, 0, 'the sending host does not know of the block')
    const notice = await waitFor(async () => (await inbox(h2, 'brief')).find((r) => r.signal === 'ERROR' && r.payload.context?.includes('NO_GRANT') === true), 20_000, 'dead-letter notice to brief')
    assert.doesNotMatch(notice.payload.context ?? '', /block/i)
    assert.equal((await texts(h1, 'lead')).length, before, 'nothing entered lead\'s inbox')
    await h1.ok(['unblock', '--as', 'lead', 'w1'])
    await h1.ok(['unblock', '--as', 'lead', 'brief'])
    assert.equal((await send(h1, 'w1', 'lead', 'unblocked group')).code, 0)
    assert.equal((await send(h2, 'brief', 'lead', 'unblocked granted')).code, 0)
    await waitFor(async () => { const t = await texts(h1, 'lead'); return t.includes('unblocked group') && t.includes('unblocked granted') }, 20_000, 'unblocked messages')
  })

  it('access matrix: violations are rejected by the sender and by the receiver with named reasons', async () => {
    try {
    await h1.ok(['profile', '--as', 'w2', '--signals', 'MESSAGE', '--sends-to', 'lead'])
    const sig = await send(h1, 'w2', 'lead', 'x', ['--signal', 'CHECKPOINT'])
    assert.match(sig.stderr, /PROFILE_SIGNAL/)
    const target = await send(h1, 'w2', 'w1', 'not in sends_to')
    assert.match(target.stderr, /PROFILE_TARGET/)
    await h1.ok(['profile', '--as', 'lead', '--receives-from', 'w1,w2', '--zones', 'project'])
    const zone = await send(h1, 'w1', 'lead', 'kernel', ['--zone', 'kernel'])
    assert.match(zone.stderr, /PROFILE_ZONE/)
    const queued = await send(h2, 'brief', 'lead', 'not in receives_from')
    assert.equal(queued.code, 0, `the sender cannot see the receiver's profile: ${queued.stderr}`)
    await waitFor(async () => (await inbox(h2, 'brief')).find((r) => r.signal === 'ERROR' && r.payload.context?.includes('PROFILE_SENDER') === true), 20_000, 'receiver rejects with PROFILE_SENDER')
    assert.ok(!(await texts(h1, 'lead')).includes('not in receives_from'))
    } finally {
      await h1.ok(['profile', '--as', 'lead'])
      await h1.ok(['profile', '--as', 'w2'])
    }
  })

  describe('forged proofs from a misbehaving host', () => {
    let x: { host: Host, stop: () => Promise<void> }
    let leadId: string
    let mallory: string
    let mallory2: string
    let legit: Uint8Array[]

    before(async () => {
      x = await startInProcessHost()
      mallory = (await x.host.registry.add('mallory')).record.id
      mallory2 = (await x.host.registry.add('mallory2')).record.id
      await x.host.keeper.join(h1.addr)
      leadId = (x.host.directory.byNameUnique('lead') ?? assert.fail('lead unknown')).nodeId
      await h1.ok(['grant', '--as', 'lead', '--to', 'mallory', '--signals', 'MESSAGE'])
      legit = (await waitFor(async () => x.host.acl.store.heldFor(mallory, leadId)[0], 10_000, 'grant to mallory')).chain
    })

    after(async () => { await x?.stop() })

    function packet (from: string, proof: Packet['proof']): Packet {
      return { id: ulid(), from, to: leadId, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'forged ' + ulid() }, ts: Date.now(), proof }
    }

    async function rejectCode (p: Packet): Promise<string> {
      const s = await rawPacketStream(x.host, h1.addr)
      s.write(encodeFrame({ t: 'p', b: 1, p: [encodePacket(p)] }))
      const ack = await s.next()
      s.close()
      assert.ok(ack !== 'closed' && ack.t === 'a')
      const r = ack.r[0]
      return 'c' in r ? r.c : 'accepted'
    }

    it('accepts the legitimate grant (control case)', async () => {
      assert.equal(await rejectCode(packet(mallory, { grants: legit })), 'accepted')
    })

    it('rejects a widened delegation, a wrong signer, another audience, a tampered byte and a forged lineage, each by name', async () => {
      const before = (await texts(h1, 'lead')).length
      const mk = x.host.nodes.get('mallory')?.key ?? assert.fail()
      const mk2 = x.host.nodes.get('mallory2')?.key ?? assert.fail()
      const widened = encodeToken(issueToken(mk, { aud: mallory2, sub: leadId, pol: { signals: ['MESSAGE', 'ESCALATE'] }, exp: Date.now() + 60_000 }))
      assert.equal(await rejectCode(packet(mallory2, { grants: [...legit, widened] })), 'TOKEN_WIDENED')
      const signed = issueToken(mk, { aud: mallory, sub: leadId, exp: Date.now() + 60_000 })
      const wrongSigner = encodeToken({ payload: { ...signed.payload, iss: leadId }, sig: signed.sig })
      assert.equal(await rejectCode(packet(mallory, { grants: [wrongSigner] })), 'TOKEN_SIGNATURE')
      assert.equal(await rejectCode(packet(mallory2, { grants: legit })), 'TOKEN_AUDIENCE')
      const tampered = legit.map((b) => b.slice())
      tampered[0][tampered[0].length - 3] ^= 0x01
      assert.match(await rejectCode(packet(mallory, { grants: tampered })), /^TOKEN_(SIGNATURE|MALFORMED)$/)
      const forgedLineage: SignedLineage = issueLineage(mk, mallory2, 1)
      const claimed = encodeLineage({ cert: { ...forgedLineage.cert, parent: leadId }, sig: forgedLineage.sig })
      assert.equal(await rejectCode(packet(mallory2, { lineage: [claimed] })), 'LINEAGE_SIGNATURE')
      void mk2
      assert.equal((await texts(h1, 'lead')).length, before, 'nothing forged entered the inbox')
    })

    it('a revocation pushed by a node that is not an issuer in the chain is not applied nor listed', async () => {
      const legitId = tokenId(legit[legit.length - 1])
      const mk = x.host.nodes.get('mallory')?.key ?? assert.fail()
      const h1Peer = multiaddr(h1.addr).getPeerId() ?? assert.fail()
      await pushRevocations(x.host.libp2p, peerIdFromString(h1Peer), [encodeRevocation(issueRevocation(mk, legitId))])
      const gs = JSON.parse(await h1.ok(['grants', '--json'])) as { issued: Array<{ token_id: string, revoked: boolean }> }
      assert.equal(gs.issued.find((g) => g.token_id === legitId)?.revoked, false)
      assert.equal(await rejectCode(packet(mallory, { grants: legit })), 'accepted')
    })

    it('denied-attempt notices reach the target without the body, at most once per sender per window', async () => {
      await h1.ok(['node', 'add', 'quiet'])
      const quietId = (await waitFor(async () => { await x.host.exchange.exchangeAll(); return x.host.directory.byNameUnique('quiet') }, 10_000, 'quiet card')).nodeId
      const s = await rawPacketStream(x.host, h1.addr)
      for (let i = 0; i < 3; i++) {
        const p: Packet = { id: ulid(), from: mallory, to: quietId, signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'SECRET BODY' }, ts: Date.now() }
        s.write(encodeFrame({ t: 'p', b: i, p: [encodePacket(p)] }))
        const ack = await s.next()
        assert.ok(ack !== 'closed' && ack.t === 'a' && 'c' in ack.r[0] && ack.r[0].c === 'NO_GRANT')
      }
      s.close()
      const rows = await waitFor(async () => { const r = await inbox(h1, 'quiet'); return r.length > 0 ? r : undefined }, 10_000, 'notice')
      await new Promise((r) => setTimeout(r, 500))
      const all = await inbox(h1, 'quiet')
      assert.equal(all.length, 1, 'one notice for three attempts')
      assert.equal(rows[0].signal, 'ERROR')
      assert.match(rows[0].payload.context ?? '', /denied attempt: mallory .* MESSAGE .*NO_GRANT/)
      assert.doesNotMatch(JSON.stringify(all), /SECRET BODY/)
    })
  })
})

describe('e2e permissions - profiles from config.yaml', function () {
  this.timeout(60_000)
  let h: TestHost
  before(async () => { h = await startHost({ config: { profiles: { narrow: { signals: ['MESSAGE'], sends_to: ['boss'] } } } }) })
  after(async () => { await h?.cleanup() })

  it('applies a configured profile to the node of that name, which only narrows', async () => {
    await idOf(h, 'boss')
    await idOf(h, 'narrow', 'boss')
    await idOf(h, 'sibling', 'boss')
    assert.equal((await send(h, 'narrow', 'boss', 'fine')).code, 0)
    assert.match((await send(h, 'narrow', 'boss', 'snap', ['--signal', 'CHECKPOINT'])).stderr, /PROFILE_SIGNAL/)
    assert.match((await send(h, 'narrow', 'sibling', 'hi')).stderr, /PROFILE_TARGET/)
    assert.equal((await send(h, 'sibling', 'narrow', 'to narrow')).code, 0, 'the profile does not restrict what others send it')
  })
})
