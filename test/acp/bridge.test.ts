import { strict as assert } from 'node:assert'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startHost, waitFor, type TestHost } from '../utils/hosts.js'
import { nodeId, waitLog } from '../agents/helpers.js'
import { acpRow, acpSpec, errorReason, rows, sendId, waitAcp, waitReply, type Row } from './helpers.js'
import { processAlive } from '../../src/util/process-alive.js'

function ridOf (escalate: Row): string {
  return String(escalate.conversation_id).replace(/^permission:/, '')
}

async function escalateFor (h: TestHost, promptId: string): Promise<Row> {
  const r = await waitReply(h, 'lead', promptId, 'ESCALATE')
  return r.find((x) => x.signal === 'ESCALATE') as Row
}

describe('acp - ACP agents as managed nodes (runtime: acp, the echo agent fixture)', function () {
  this.timeout(240_000)
  let h: TestHost
  let dir: string
  let work: string

  before(async () => {
    h = await startHost()
    dir = mkdtempSync(join(tmpdir(), 'am-acp-'))
    work = join(dir, 'work')
    mkdirSync(work)
    writeFileSync(join(work, 'note.txt'), 'inside cwd')
    await nodeId(h, 'lead')
    await nodeId(h, 'sib', 'lead')
    await h.ok(['agent', 'start', acpSpec(dir, 'coder', work), '--parent', 'lead'])
    await h.ok(['agent', 'start', acpSpec(dir, 'quick', work, { permission_timeout: '4s' }), '--parent', 'lead'])
    await waitAcp(h, 'coder', (a) => a.acp?.agent === 'amesh-test-echo', 'coder initialized')
    await h.ok(['agent', 'start', acpSpec(dir, 'again', work, { retry: 'once' }), '--parent', 'lead'])
    await waitAcp(h, 'quick', (a) => a.acp?.agent === 'amesh-test-echo', 'quick initialized')
    await waitAcp(h, 'again', (a) => a.acp?.agent === 'amesh-test-echo', 'again initialized')
  })

  after(async () => {
    await h?.cleanup()
    rmSync(dir, { recursive: true, force: true })
  })

  it('acp - agent ls shows the agent name and version from initialize, and the state', async () => {
    const a = await acpRow(h, 'coder')
    assert.equal(a?.state, 'running')
    assert.equal(a?.acp?.agent, 'amesh-test-echo')
    assert.equal(a?.acp?.version, '1.2.3')
    assert.equal(a?.acp?.state, 'idle')
  })

  it('acp - SPAWN → CHECKPOINTs, an ESCALATE for the permission, and after amesh approve a RETURN, in that order', async () => {
    const id = await sendId(h, 'lead', 'coder', 'hello mesh', ['--signal', 'SPAWN', '--payload', JSON.stringify({ context: 'the task' })])
    const esc = await escalateFor(h, id)
    assert.deepEqual(esc.payload.options, ['allow', 'reject'])
    assert.match(esc.payload.text ?? '', /tool write_file \(edit\)/)
    assert.match(esc.payload.text ?? '', /"path":"out.txt"/)
    assert.equal((await acpRow(h, 'coder'))?.acp?.state, 'awaiting permission')
    await h.ok(['approve', ridOf(esc), '--as', 'lead'])
    const replies = await waitReply(h, 'lead', id, 'RETURN')
    const signals = replies.map((r) => r.signal)
    assert.equal(signals[0], 'CHECKPOINT')
    assert.equal(signals.filter((s) => s === 'ESCALATE').length, 1)
    assert.equal(signals.filter((s) => s === 'RETURN').length, 1)
    assert.equal(signals[signals.length - 1], 'RETURN')
    const before = replies.slice(0, signals.indexOf('ESCALATE')).map((r) => (JSON.parse(r.payload.context ?? '{}') as { text: string }).text).join('')
    assert.equal(before, 'chunk-1 chunk-2 echo: hello mesh\n\ncontext:\nthe task')
    const result = replies[replies.length - 1].payload.result ?? ''
    assert.equal(result, 'chunk-1 chunk-2 echo: hello mesh\n\ncontext:\nthe task | approved: allow')
    const logs = await waitLog(h, 'coder', `stop ${id}: end_turn`)
    assert.match(logs, new RegExp(`prompt ${id} from lead \\(SPAWN`))
    const a = await waitAcp(h, 'coder', (x) => x.acp?.state === 'idle', 'coder idle again')
    assert.ok((a.acp?.sessions ?? 0) >= 1)
  })

  it('acp - deny: the agent sees the reject outcome and the parent gets its RETURN', async () => {
    const id = await sendId(h, 'lead', 'coder', 'second task')
    const esc = await escalateFor(h, id)
    await h.ok(['deny', ridOf(esc), '--as', 'lead'])
    const replies = await waitReply(h, 'lead', id, 'RETURN')
    assert.equal(replies[replies.length - 1].payload.result, 'chunk-1 chunk-2 echo: second task | denied: reject')
    await waitLog(h, 'coder', 'permission outcome {"outcome":"selected","optionId":"reject"}')
  })

  it('acp - a reply to the ESCALATE naming one of the agent\'s option ids is the verdict', async () => {
    const id = await sendId(h, 'lead', 'coder', 'third task')
    const esc = await escalateFor(h, id)
    await h.ok(['send', '--as', 'lead', 'coder', 'allow', '--reply-to', esc.id])
    const replies = await waitReply(h, 'lead', id, 'RETURN')
    assert.equal(replies[replies.length - 1].payload.result, 'chunk-1 chunk-2 echo: third task | approved: allow')
  })

  it('acp - no verdict within the timeout → ERROR cancelled; a verdict from a node that is not the approver does not count', async () => {
    const id = await sendId(h, 'lead', 'quick', 'wait for me')
    const esc = await escalateFor(h, id)
    // sib may message quick (siblings), but only lead (the requester) is the approver
    await h.ok(['send', '--as', 'sib', 'quick', `allow ${ridOf(esc)}`, '--conversation', String(esc.conversation_id)])
    const replies = await waitReply(h, 'lead', id, 'ERROR')
    const errors = replies.filter((r) => r.signal === 'ERROR')
    assert.equal(errors.length, 1)
    assert.equal(errorReason(errors[0]), 'cancelled')
    assert.equal(replies.filter((r) => r.signal === 'RETURN').length, 0)
    await waitLog(h, 'quick', 'sib is not the approver')
    await waitLog(h, 'quick', 'permission outcome {"outcome":"cancelled"}')
  })

  it('acp - fs/read_text_file outside cwd is refused, inside it is answered', async () => {
    const outside = await sendId(h, 'lead', 'coder', `read ${join(dir, 'coder.yaml')}`)
    const r1 = await waitReply(h, 'lead', outside, 'RETURN')
    assert.match(r1[r1.length - 1].payload.result ?? '', /^read refused: .*outside the node's working directory/)
    const inside = await sendId(h, 'lead', 'coder', `read ${join(work, 'note.txt')}`)
    const r2 = await waitReply(h, 'lead', inside, 'RETURN')
    assert.equal(r2[r2.length - 1].payload.result, 'read ok: inside cwd')
    const traversal = await sendId(h, 'lead', 'coder', `read ${work}/../coder.yaml`)
    const r3 = await waitReply(h, 'lead', traversal, 'RETURN')
    assert.match(r3[r3.length - 1].payload.result ?? '', /^read refused: /)
  })

  it('acp - the agent messages a sibling through amesh\'s MCP server from mcpServers; the sibling sees the agent node as sender', async () => {
    const id = await sendId(h, 'lead', 'coder', 'mcp sib hello from the agent')
    const replies = await waitReply(h, 'lead', id, 'RETURN', 60_000)
    assert.match(replies[replies.length - 1].payload.result ?? '', /^tools has send; sent: /)
    const got = (await rows(h, 'sib')).filter((r) => r.payload.text === 'hello from the agent')
    assert.equal(got.length, 1)
    assert.equal(got[0].from, 'coder')
    assert.equal(got[0].signal, 'MESSAGE')
  })

  it('acp - a conversation keeps its ACP session; another conversation gets its own', async () => {
    const ask = async (conv: string): Promise<string> => {
      const id = await sendId(h, 'lead', 'coder', 'whoami', ['--conversation', conv])
      const r = await waitReply(h, 'lead', id, 'RETURN')
      return r[r.length - 1].payload.result ?? ''
    }
    const a1 = await ask('conv-a')
    const a2 = await ask('conv-a')
    const b1 = await ask('conv-b')
    assert.equal(a1, a2)
    assert.notEqual(a1, b1)
    assert.match(a1, /^s\d+-\d+$/)
  })

  it('acp - agent output holding a lone surrogate arrives, once, with U+FFFD in its place (not refused and lost)', async () => {
    const id = await sendId(h, 'lead', 'coder', 'half')
    const returns = (await waitReply(h, 'lead', id, 'RETURN')).filter((x) => x.signal === 'RETURN')
    assert.deepEqual(returns.map((r) => r.payload.result), ['half a pair \ufffd'])
  })

  it('acp - a cancel packet → session/cancel → ERROR cancelled', async () => {
    const id = await sendId(h, 'lead', 'coder', 'hang on')
    await waitLog(h, 'coder', `prompt ${id} from lead`)
    await h.ok(['send', '--as', 'lead', 'coder', 'cancel', '--reply-to', id, '--payload', JSON.stringify({ context: '{"acp":"cancel"}' })])
    const replies = await waitReply(h, 'lead', id, 'ERROR').catch(async (err) => { console.error(await h.ok(['agent', 'logs', 'coder']), JSON.stringify(await rows(h, 'coder'))); throw err })
    assert.equal(errorReason(replies.find((r) => r.signal === 'ERROR') as Row), 'cancelled')
    await waitLog(h, 'coder', 'echo-agent: session/cancel')
  })

  it('acp - kill -9 of the agent mid-prompt → ERROR naming the crash; the supervisor restarts it; the next prompt works', async () => {
    const k = await sendId(h, 'lead', 'coder', 'whoami', ['--conversation', 'conv-k'])
    const sid = (await waitReply(h, 'lead', k, 'RETURN')).filter((x) => x.signal === 'RETURN')[0].payload.result ?? ''
    const before = await waitAcp(h, 'coder', (a) => a.acp?.state === 'idle' && a.acp.agent_pid !== null, 'coder idle')
    const id = await sendId(h, 'lead', 'coder', 'hang until killed')
    await waitAcp(h, 'coder', (a) => a.acp?.state === 'prompting', 'coder prompting')
    process.kill(before.acp?.agent_pid as number, 'SIGKILL')
    const replies = await waitReply(h, 'lead', id, 'ERROR')
    const errors = replies.filter((r) => r.signal === 'ERROR')
    assert.equal(errors.length, 1)
    assert.equal(errorReason(errors[0]), 'agent process crashed: killed by SIGKILL')
    const after = await waitAcp(h, 'coder', (a) => a.restarts >= 1 && a.state === 'running' && a.acp?.agent_pid !== null && a.acp?.agent_pid !== before.acp?.agent_pid && a.acp?.state === 'idle', 'coder restarted')
    assert.ok(after.restarts >= 1)
    const next = await sendId(h, 'lead', 'coder', `read ${join(work, 'note.txt')}`)
    const r = await waitReply(h, 'lead', next, 'RETURN')
    assert.equal(r[r.length - 1].payload.result, 'read ok: inside cwd')
    // the crashed prompt was reported once, not run again
    assert.equal((await waitReply(h, 'lead', id, 'ERROR')).length, replies.length)
    // the stored session of conv-k is loaded into the new agent process (session/load), not replaced
    const q = await sendId(h, 'lead', 'coder', 'whoami', ['--conversation', 'conv-k'])
    assert.equal((await waitReply(h, 'lead', q, 'RETURN')).filter((x) => x.signal === 'RETURN')[0].payload.result, sid)
    await waitLog(h, 'coder', `echo-agent: session/load ${sid}`)
  })

  it('acp - retry: once — a prompt whose agent was killed mid-turn runs once more after the restart, and answers once', async () => {
    const marker = join(dir, 'hangonce.marker')
    const id = await sendId(h, 'lead', 'again', `hangonce ${marker}`)
    const a = await waitAcp(h, 'again', (x) => x.acp?.state === 'prompting' && x.acp.agent_pid !== null, 'again prompting')
    process.kill(a.acp?.agent_pid as number, 'SIGKILL')
    const replies = await waitReply(h, 'lead', id, 'RETURN', 60_000)
    assert.equal(replies.filter((r) => r.signal === 'RETURN').length, 1)
    assert.equal(replies.filter((r) => r.signal === 'ERROR').length, 0)
    assert.equal(replies.filter((r) => r.signal === 'RETURN')[0].payload.result, 'second run')
    await waitLog(h, 'again', `prompt ${id} from lead (MESSAGE, session`)
    assert.match(await h.ok(['agent', 'logs', 'again']), new RegExp(`prompt ${id} from lead \\(MESSAGE, session [^,]+, attempt 2\\)`))
  })

  it('acp - kill -9 of the daemon mid-prompt → after the restart the requester gets an ERROR for it, never silence', async () => {
    const id = await sendId(h, 'lead', 'coder', 'hang through the crash')
    await waitAcp(h, 'coder', (a) => a.acp?.state === 'prompting', 'coder prompting')
    h.kill9()
    await waitFor(async () => !processAlive(h.pid), 20_000, 'daemon gone')
    await h.start()
    const replies = await waitReply(h, 'lead', id, 'ERROR', 60_000)
    const errors = replies.filter((r) => r.signal === 'ERROR')
    assert.equal(errors.length, 1)
    assert.match(errorReason(errors[0]), /^interrupted: the agent process or the amesh daemon ended while this prompt was in flight/)
  })
})
