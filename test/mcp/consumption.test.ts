// Consumption: a push never reads; only the session's reply, ack or inbox tool
// does, and a new attachment gets every unread message pushed again, in order.
// One real host on loopback; `amesh mcp` spawned by the MCP SDK Client.
import { strict as assert } from 'node:assert'
import { amesh, inbox, inboxInfo, makeHome, Session, startHost, stopHost, textOf, until } from './harness.js'

interface State { last: number, cursor: number, unread: number, attached: number, last_read?: number }

describe('mcp - consumption: only handling reads', function () {
  this.timeout(180_000)
  let a = ''
  const sessions: Session[] = []

  async function session (args: string[]): Promise<Session> {
    const s = await Session.start(a, args)
    sessions.push(s)
    return s
  }

  async function sendLines (from: string, to: string, lines: string[]): Promise<void> {
    await amesh(['send', '--as', from, to, '-', '--home', a], { input: lines.join('\n') + '\n' })
  }

  /** Two local nodes that may message each other. */
  async function pair (from: string, to: string): Promise<void> {
    for (const n of [from, to]) await amesh(['node', 'add', n, '--home', a]).catch(() => {})
    await amesh(['grant', '--as', to, '--to', from, '--home', a])
    await amesh(['grant', '--as', from, '--to', to, '--home', a])
  }

  async function state (s: Session): Promise<State> {
    return (JSON.parse(textOf(await s.tool('status'))) as { consumption: State }).consumption
  }

  before(async () => {
    a = makeHome()
    await startHost(a)
  })

  after(async () => {
    for (const s of sessions) await s.close()
    await stopHost(a)
  })

  it('consumption - a session that lists tools and asks status ten times reads nothing', async () => {
    await pair('src0', 'idle')
    await sendLines('src0', 'idle', Array.from({ length: 12 }, (_, i) => `w${i}`))
    for (let i = 0; i < 10; i++) {
      const s = await session(['--name', 'idle'])
      await s.client.listTools()
      assert.equal((await s.tool('status')).isError, undefined)
      await s.close()
    }
    const info = await inboxInfo(a, 'idle')
    assert.deepEqual(info, { last: 12, cursor: 0, unacked: 12 })
    assert.equal((await inbox(a, 'idle')).length, 12, 'amesh inbox still lists all 12')
  })

  it('consumption - replies and acks read; the cursor is exactly at what was read; a new attachment gets the unread rest in order', async () => {
    await pair('src1', 'reader')
    const first = await session(['--name', 'reader'])
    const lines = Array.from({ length: 20 }, (_, i) => `m${i + 1}`)
    await sendLines('src1', 'reader', lines)
    const events = await first.waitChannel(20)
    assert.deepEqual(events.map((e) => e.content), lines, 'all 20 pushed, in order')
    assert.equal(events[0].meta?.unread !== undefined, true, 'the first event says how many are unread')
    assert.deepEqual((await inboxInfo(a, 'reader'))?.cursor, 0, 'pushing read nothing')

    // reply to seqs 12, 14, 16, then ack up to 10: read = 1..10, 12, 14, 16
    const byseq = (n: number): string => String(events[n - 1].meta?.msg_id)
    for (const n of [12, 14, 16]) {
      const r = await first.tool('reply', { msg_id: byseq(n), text: `re ${n}` })
      assert.equal(r.isError, undefined, textOf(r))
    }
    const acked = await first.tool('ack', { upto_seq: 10 })
    assert.equal(acked.isError, undefined, textOf(acked))
    assert.deepEqual(JSON.parse(textOf(acked)), { cursor: 10, newly_read: 10, unread: 7 })
    // a sender on the same host sees the receipt too
    const local = await until('the local receipt to say read', async () => {
      const r = JSON.parse(await amesh(['receipt', byseq(1), '--json', '--home', a])) as { state: string, events: Array<{ state: string }> }
      return r.state === 'read' ? r : undefined
    })
    assert.deepEqual(local.events.map((e) => e.state), ['delivered', 'pushed', 'read'])
    const st = await state(first)
    assert.equal(st.cursor, 10)
    assert.equal(st.unread, 7)
    assert.equal(st.attached, 1)
    assert.equal(typeof st.last_read, 'number')
    // presence: `amesh nodes` says a session is attached now and when one last read
    const row = (await amesh(['nodes', '--json', '--home', a])).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { name: string, session?: { attached: number, last_read?: string } }).find((n) => n.name === 'reader')
    assert.equal(row?.session?.attached, 1)
    assert.ok(!Number.isNaN(Date.parse(row?.session?.last_read ?? '')))
    await first.close()
    await until('the attachment to end', async () => {
      const r = (await amesh(['nodes', '--json', '--home', a])).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { name: string, session?: { attached: number } }).find((n) => n.name === 'reader')
      return r?.session?.attached === 0 ? true : undefined
    })

    const second = await session(['--name', 'reader'])
    const rest = await second.waitChannel(7)
    const unreadSeqs = [11, 13, 15, 17, 18, 19, 20]
    assert.deepEqual(rest.map((e) => e.meta?.seq), unreadSeqs.map(String), 'the unread rest, in order')
    assert.deepEqual(rest.map((e) => e.content), unreadSeqs.map((n) => `m${n}`))
    assert.equal(rest[0].meta?.unread, '7')
    // reading 11 closes the gap: the cursor moves over 12 to 13's gap
    await second.tool('ack', { msg_ids: [String(rest[0].meta?.msg_id)] })
    assert.equal((await inboxInfo(a, 'reader'))?.cursor, 12)
    // the inbox tool returns the unread ones and reads them
    const taken = JSON.parse(textOf(await second.tool('inbox', { limit: 100 }))) as Array<{ seq: string }>
    assert.deepEqual(taken.map((t) => t.seq), ['13', '15', '17', '18', '19', '20'])
    assert.equal((await inboxInfo(a, 'reader'))?.cursor, 20)
    assert.deepEqual(JSON.parse(textOf(await second.tool('inbox'))), [], 'nothing unread is left')
    assert.equal(second.channel.length, 7, 'no message pushed twice to one attachment')
  })

  it('consumption - the re-push is bounded; the rest is reachable through inbox', async () => {
    await pair('src2', 'bounded')
    await sendLines('src2', 'bounded', Array.from({ length: 30 }, (_, i) => `b${i + 1}`))
    const s = await session(['--name', 'bounded', '--repush', '5'])
    const got = await s.waitChannel(5)
    assert.equal(got[0].meta?.unread, '30')
    assert.equal(got[0].meta?.unread_not_pushed, '25')
    const all = JSON.parse(textOf(await s.tool('inbox', { limit: 1000 }))) as Array<{ content: string }>
    assert.equal(all.length, 30)
    await until('cursor at 30', async () => (await inboxInfo(a, 'bounded'))?.cursor === 30 ? true : undefined)
    assert.equal(s.channel.length, 5)
  })

  it('consumption - tool arguments are strict: an unknown field is refused', async () => {
    const s = await session(['--name', 'strict'])
    const r = await s.tool('status', { bogus: 1 })
    assert.equal(r.isError, true, textOf(r))
    const tools = await s.client.listTools()
    const send = tools.tools.find((t) => t.name === 'send')
    const props = send?.inputSchema.properties as Record<string, { maxLength?: number }>
    assert.equal(props.text.maxLength, 262_144)
    assert.equal(send?.inputSchema.additionalProperties, false)
    assert.ok(tools.tools.some((t) => t.name === 'ack'))
  })
})
