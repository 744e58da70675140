// The Claude Code face end to end: two real hosts on loopback, `amesh mcp`
// spawned by the MCP SDK Client over stdio (as Claude Code does).
import { strict as assert } from 'node:assert'
import { amesh, drained, inbox, inboxInfo, makeHome, rawStdout, Session, sleep, startHost, stopHost, textOf, until, type Packet } from './harness.js'

const META_KEY = /^[A-Za-z0-9_]+$/

describe('mcp - amesh mcp over stdio', function () {
  this.timeout(120_000)
  let a = ''
  let b = ''
  const sessions: Session[] = []

  async function session (args: string[]): Promise<Session> {
    const s = await Session.start(a, args)
    sessions.push(s)
    return s
  }

  async function sendFromB (as: string, to: string, text: string, extra: string[] = []): Promise<string> {
    return (await amesh(['send', '--as', as, to, text, ...extra, '--home', b])).split(' ')[0]
  }

  /** Create `peer` on host B and let it write to the session's node (a grant issued through the session's tool). */
  async function openTo (s: Session, peer: string): Promise<string> {
    await amesh(['node', 'add', peer, '--home', b]).catch(() => {})
    const g = await s.tool('grant', { to: peer })
    assert.equal(g.isError, undefined, textOf(g))
    const token = (JSON.parse(textOf(g)) as { token_id: string }).token_id
    await until(`host B to hold grant ${token}`, async () => {
      const held = (JSON.parse(await amesh(['grants', '--json', '--home', b])) as { held: Array<{ token_id: string }> }).held
      return held.some((h) => h.token_id === token) ? true : undefined
    })
    return token
  }

  /** Let the session's node write to `peer` on host B; wait until the session's host holds the grant. */
  async function grantFromB (peer: string, to: string, s: Session): Promise<void> {
    await amesh(['grant', '--as', peer, '--to', to, '--home', b])
    await until(`${to} to hold ${peer}'s grant`, async () => {
      const nodes = JSON.parse(textOf(await s.tool('nodes'))) as Array<{ name: string, may_message: boolean }>
      return nodes.some((n) => n.name === peer && n.may_message) ? true : undefined
    })
  }

  async function packetsAt (home: string, node: string, pred: (p: Packet) => boolean, n = 1): Promise<Packet[]> {
    return await until(`${n} matching packets for ${node}`, async () => {
      const ps = (await inbox(home, node)).filter(pred)
      return ps.length >= n ? ps : undefined
    })
  }

  before(async () => {
    a = makeHome()
    b = makeHome()
    const addrA = await startHost(a)
    await startHost(b, addrA)
  })

  after(async () => {
    for (const s of sessions) await s.close()
    await Promise.all([stopHost(a), stopHost(b)])
  })

  it('mcp - declares the channel, gives instructions, pushes one event with string meta', async () => {
    const s = await session(['--name', 'lead'])
    const caps = s.client.getServerCapabilities()
    assert.deepEqual(caps?.experimental?.['claude/channel'], {})
    assert.equal(caps?.experimental?.['claude/channel/permission'], undefined, 'no permission relay unless asked for')
    const instructions = s.client.getInstructions() ?? ''
    assert.match(instructions, /"lead"/)
    assert.match(instructions, /untrusted/)
    assert.match(instructions, /reply\(msg_id/)
    await openTo(s, 'peer1')

    const id = await sendFromB('peer1', 'lead', 'hello from b', ['--conversation', 'c-1', '--requires-reply'])
    await s.waitChannel(1)
    const acked = await s.tool('ack', { upto_seq: 1 }) // a push reads nothing: the session acks
    assert.equal(acked.isError, undefined, textOf(acked))
    await drained(a, 'lead', 1)
    assert.equal(s.channel.length, 1, 'exactly one notification')
    assert.deepEqual(s.methods, ['notifications/claude/channel'])
    const [event] = s.channel
    assert.equal(event.content, 'hello from b')
    const meta = event.meta ?? {}
    for (const [k, v] of Object.entries(meta)) {
      assert.match(k, META_KEY, `meta key ${k}`)
      assert.equal(typeof v, 'string', `meta.${k} is a string`)
    }
    assert.equal(meta.from, 'peer1')
    assert.equal(meta.msg_id, id)
    assert.equal(meta.seq, '1')
    assert.equal(meta.signal, 'MESSAGE')
    assert.equal(meta.conversation_id, 'c-1')
    assert.equal(meta.requires_reply, 'true')
    assert.match(String(meta.from_id), /^did:key:/)
    assert.ok(!Number.isNaN(Date.parse(String(meta.ts))))
  })

  it('mcp - stdout carries JSON-RPC only', async () => {
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
    const inited = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })
    const out = await rawStdout(['mcp', '--name', 'raw', '--home', a], `${init}\n${inited}\n${list}\n`, { AMESH_MDNS: 'off', PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' }, 2)
    const lines = out.split('\n').filter((l) => l !== '')
    assert.ok(lines.length >= 2, `answers on stdout: ${out}`)
    for (const l of lines) assert.equal((JSON.parse(l) as { jsonrpc: string }).jsonrpc, '2.0')
  })

  it('mcp - after a kill, a restarted session replays exactly the 50 unread messages, in order, once', async () => {
    const first = await session(['--name', 'lead2'])
    await openTo(first, 'peer2')
    await sendFromB('peer2', 'lead2', 'before the crash')
    await first.waitChannel(1)
    await first.tool('ack', { msg_ids: [first.channel[0].meta?.msg_id] })
    await drained(a, 'lead2', 1, 0)
    await first.kill()

    const lines = Array.from({ length: 50 }, (_, i) => `m${i}`)
    await amesh(['send', '--as', 'peer2', 'lead2', '-', '--home', b], { input: lines.join('\n') + '\n' })
    await until('50 packets in lead2\'s inbox', async () => ((await inboxInfo(a, 'lead2'))?.last ?? 0) >= 51 ? true : undefined)

    const second = await session(['--name', 'lead2'])
    await second.waitChannel(50)
    await second.tool('ack', { upto_seq: 51 })
    await drained(a, 'lead2', 51)
    assert.deepEqual(second.channel.map((e) => e.content), lines)
    assert.deepEqual(second.channel.map((e) => e.meta?.seq), lines.map((_, i) => String(i + 2)))
  })

  it('mcp - send and reply reach the other host with conversation_id and in_reply_to', async () => {
    const s = await session(['--name', 'lead3'])
    await openTo(s, 'peer3')
    await grantFromB('peer3', 'lead3', s)
    const sent = await s.tool('send', { to: 'peer3', text: 'hi peer3', conversation_id: 'conv-x', requires_reply: true })
    assert.equal(sent.isError, undefined, textOf(sent))
    const sentId = (JSON.parse(textOf(sent)) as { id: string }).id
    const [got] = await packetsAt(b, 'peer3', (p) => p.id === sentId)
    assert.equal(got.conversation_id, 'conv-x')
    assert.equal(got.from, 'lead3')
    assert.equal(got.payload.text, 'hi peer3')

    const incoming = await sendFromB('peer3', 'lead3', 'question?', ['--conversation', 'conv-y'])
    await s.waitChannel(1)
    assert.equal(s.channel[0].meta?.msg_id, incoming)
    const replied = await s.tool('reply', { msg_id: incoming, text: 'answer' })
    assert.equal(replied.isError, undefined, textOf(replied))
    const [reply] = await packetsAt(b, 'peer3', (p) => p.in_reply_to === incoming)
    assert.equal(reply.conversation_id, 'conv-y')
    assert.equal(reply.payload.text, 'answer')

    const plain = await sendFromB('peer3', 'lead3', 'no thread')
    await s.waitChannel(2)
    assert.equal((await s.tool('reply', { msg_id: plain, text: 'ok', signal: 'RETURN' })).isError, undefined)
    const [returned] = await packetsAt(b, 'peer3', (p) => p.in_reply_to === plain)
    assert.equal(returned.conversation_id, plain, 'a thread starts at the first message')
    assert.equal(returned.signal, 'RETURN')
    assert.equal(returned.payload.result, 'ok')

    const unknown = await s.tool('send', { to: 'nobody-here', text: 'x' })
    assert.equal(unknown.isError, true)
    assert.match(textOf(unknown), /unknown node: nobody-here/)
    const badReply = await s.tool('reply', { msg_id: 'NOPE', text: 'x' })
    assert.equal(badReply.isError, true)
    const badPayload = await s.tool('send', { to: 'peer3', signal: 'HANDOFF', text: 'x' })
    assert.equal(badPayload.isError, true)
    assert.match(textOf(badPayload), /HANDOFF requires payload.decision/)
  })

  it('mcp - tools nodes, inbox, status answer; grant/revoke surface the daemon', async () => {
    const s = await session(['--name', 'lead6'])
    const token = await openTo(s, 'peer6')
    const nodes = JSON.parse(textOf(await s.tool('nodes'))) as Array<{ name: string, may_message: boolean, reason?: string }>
    const peer6 = nodes.find((n) => n.name === 'peer6')
    assert.equal(peer6?.may_message, false, 'peer6 has not granted lead6')
    assert.match(peer6?.reason ?? '', /NO_GRANT|grant/)
    await grantFromB('peer6', 'lead6', s)
    const after = JSON.parse(textOf(await s.tool('nodes'))) as typeof nodes
    assert.equal(after.find((n) => n.name === 'peer6')?.may_message, true)
    await sendFromB('peer6', 'lead6', 'to re-read')
    await s.waitChannel(1)
    const recent = JSON.parse(textOf(await s.tool('inbox', { limit: 5 }))) as Array<{ content: string, from: string }>
    assert.deepEqual(recent.map((r) => r.content), ['to re-read'])
    const status = JSON.parse(textOf(await s.tool('status'))) as { node: { name: string }, host: { peerId: string }, peers: string[] }
    assert.equal(status.node.name, 'lead6')
    assert.equal(status.peers.length, 1)
    const revoked = await s.tool('revoke', { token_id: token })
    assert.equal(revoked.isError, undefined, textOf(revoked))
    const unknownToken = await s.tool('revoke', { token_id: 'nope' })
    assert.equal(unknownToken.isError, true)
    assert.match(textOf(unknownToken), /unknown token nope/)
    const badGrant = await s.tool('grant', { to: 'nobody-here' })
    assert.equal(badGrant.isError, true)
  })

  it('mcp - a denied send returns isError with the reason', async () => {
    await amesh(['node', 'add', 'closed7', '--home', b])
    const s = await session(['--name', 'lead7'])
    const denied = await s.tool('send', { to: 'closed7', text: 'let me in' })
    assert.equal(denied.isError, true, textOf(denied))
    assert.match(textOf(denied), /^ACCESS_DENIED: NO_GRANT: .*closed7/)
    await grantFromB('closed7', 'lead7', s)
    const allowed = await s.tool('send', { to: 'closed7', text: 'now with a grant' })
    assert.equal(allowed.isError, undefined, textOf(allowed))
  })

  it('mcp - permission relay: the approver\'s verdict comes back, a non-approver\'s is ignored', async () => {
    await amesh(['node', 'add', 'boss', '--home', b])
    const s = await session(['--name', 'lead4', '--permission-relay', '--approver', 'boss'])
    await grantFromB('boss', 'lead4', s)
    await openTo(s, 'boss')
    await openTo(s, 'mallory')
    assert.deepEqual(s.client.getServerCapabilities()?.experimental?.['claude/channel/permission'], {})
    await s.notify('notifications/claude/channel/permission_request', { request_id: 'abcde', tool_name: 'Bash', description: 'list files', input_preview: '{"command":"ls"}' })
    const [esc] = await packetsAt(b, 'boss', (p) => p.signal === 'ESCALATE' && p.conversation_id === 'permission:abcde')
    assert.equal(esc.from, 'lead4')
    assert.deepEqual(esc.payload.options, ['allow', 'deny'])
    assert.match(esc.payload.text ?? '', /Bash/)
    assert.match(esc.payload.text ?? '', /list files/)

    // a verdict from another node, even in the right conversation, is ignored
    const before = (await inboxInfo(a, 'lead4'))?.last ?? 0
    await sendFromB('mallory', 'lead4', 'deny abcde', ['--conversation', 'permission:abcde', '--reply-to', esc.id])
    await drained(a, 'lead4', before + 1)
    assert.deepEqual(s.permission, [])

    await amesh(['approve', 'abcde', '--as', 'boss', '--home', b])
    await until('the permission verdict', () => s.permission.length > 0 ? true : undefined)
    await drained(a, 'lead4', before + 2)
    assert.deepEqual(s.permission, [{ request_id: 'abcde', behavior: 'allow' }])
    assert.equal(s.channel.length, 0, 'verdicts are not shown as messages')

    // answered ids are dropped: a second verdict changes nothing
    await amesh(['deny', 'abcde', '--as', 'boss', '--home', b])
    await drained(a, 'lead4', before + 3)
    assert.equal(s.permission.length, 1)

    // the approver answers from its own session with the deny tool
    const approver = await Session.start(b, ['--name', 'boss'])
    sessions.push(approver)
    await s.notify('notifications/claude/channel/permission_request', { request_id: 'fghij', tool_name: 'Write', description: 'write a file', input_preview: '{}' })
    await until('the ESCALATE in the approver\'s session', () => approver.channel.find((e) => e.meta?.permission_request_id === 'fghij'))
    const answered = await approver.tool('deny', { request_id: 'fghij' })
    assert.equal(answered.isError, undefined, textOf(answered))
    await until('the second verdict', () => s.permission.length > 1 ? true : undefined)
    assert.deepEqual(s.permission[1], { request_id: 'fghij', behavior: 'deny' })

    // a request whose texts hold a lone surrogate, and whose preview is clipped inside a pair, is still relayed
    await s.notify('notifications/claude/channel/permission_request', { request_id: 'klmno', tool_name: 'Edit', description: 'half \ud800 here', input_preview: 'x'.repeat(1999) + '😀😀' })
    const [odd] = await packetsAt(b, 'boss', (p) => p.signal === 'ESCALATE' && p.conversation_id === 'permission:klmno')
    assert.match(odd.payload.text ?? '', /description: half \ufffd here\n/)
    assert.ok((odd.payload.text ?? '').includes(`input: ${'x'.repeat(1999)}… (4 more characters)\n`), 'the preview is cut before the pair, not inside it')
  })

  it('mcp - the loop guard trips at its limit and says why', async () => {
    const s = await session(['--name', 'lead5', '--loop-limit', '3', '--loop-window', '1m'])
    await openTo(s, 'peer5')
    await grantFromB('peer5', 'lead5', s)
    const results = []
    for (let i = 0; i < 4; i++) {
      const id = await sendFromB('peer5', 'lead5', `ping ${i}`, ['--conversation', 'loop-1'])
      await s.waitChannel(i + 1)
      results.push(await s.tool('reply', { msg_id: id, text: `pong ${i}` }))
    }
    assert.deepEqual(results.slice(0, 3).map((r) => r.isError), [undefined, undefined, undefined])
    assert.equal(results[3].isError, true)
    assert.match(textOf(results[3]), /loop guard/)
    assert.match(textOf(results[3]), /limit 3/)
    await packetsAt(b, 'peer5', (p) => p.conversation_id === 'loop-1', 3)
    await sleep(500) // grace: a fourth reply, if one had slipped through, would arrive now
    const replies = (await inbox(b, 'peer5')).filter((p) => p.conversation_id === 'loop-1')
    assert.deepEqual(replies.map((p) => p.payload.text), ['pong 0', 'pong 1', 'pong 2'])
    // another conversation with the same peer is not blocked
    const other = await sendFromB('peer5', 'lead5', 'other thread', ['--conversation', 'loop-2'])
    await s.waitChannel(5)
    assert.equal((await s.tool('reply', { msg_id: other, text: 'fine' })).isError, undefined)
  })
})
