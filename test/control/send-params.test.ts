import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ControlClient } from '../../src/control/client.js'
import { ControlServer, method } from '../../src/control/server.js'
import { checkSendParams, sendSchema } from '../../src/control/send-params.js'
import { silentLogger } from '../../src/util/log.js'

const VALID: object[] = [
  { as: 'a', to: 'b' },
  { as: 'a', to: 'b', text: '' },
  { to: 'b', as: 'x'.repeat(256), text: 'hi', signal: 'message' },
  { as: 'a', to: 'did:key:z6Mk', payload: {}, files: [], zone: 'kernel', priority: 'low', requires_reply: false, ttl_ms: 1 },
  { ttl_ms: 86_400_000, requires_reply: true, priority: 'high', zone: 'personal', as: 'é', to: '中', conversation_id: 'c', in_reply_to: 'r', session_id: 's', return_to: '' },
  { as: 'a', to: 'b', payload: { result: 'r', options: ['x', ''], decision: 'd', context: 'c', text: 't' } },
  { as: 'a', to: 'b', payload: { options: [] }, files: ['a', 'b/c'], conversation_id: 'x'.repeat(256) }
]

const INVALID: unknown[] = [
  undefined, null, 1, 'a', [], [{ as: 'a', to: 'b' }], {},
  { as: 'a' }, { to: 'b' }, { as: '', to: 'b' }, { as: 'a', to: 'x'.repeat(257) }, { as: 1, to: 'b' }, { as: null, to: 'b' },
  { as: 'a', to: 'b', extra: 1 }, JSON.parse('{"as":"a","to":"b","__proto__":{}}'),
  { as: 'a', to: 'b', text: 1 }, { as: 'a', to: 'b', text: null }, { as: 'a', to: 'b', signal: [] },
  { as: 'a', to: 'b', payload: [] }, { as: 'a', to: 'b', payload: null }, { as: 'a', to: 'b', payload: 'x' },
  { as: 'a', to: 'b', payload: { text: 1 } }, { as: 'a', to: 'b', payload: { other: 'x' } }, { as: 'a', to: 'b', payload: { options: 'x' } },
  { as: 'a', to: 'b', payload: { options: [1] } }, { as: 'a', to: 'b', conversation_id: '' }, { as: 'a', to: 'b', session_id: 'x'.repeat(257) },
  { as: 'a', to: 'b', in_reply_to: 3 }, { as: 'a', to: 'b', return_to: false }, { as: 'a', to: 'b', priority: 'urgent' }, { as: 'a', to: 'b', priority: 'HIGH' },
  { as: 'a', to: 'b', requires_reply: 'yes' }, { as: 'a', to: 'b', requires_reply: 1 }, { as: 'a', to: 'b', zone: 'global' }, { as: 'a', to: 'b', files: 'a' },
  { as: 'a', to: 'b', files: ['a', 2] }, { as: 'a', to: 'b', ttl_ms: 0 }, { as: 'a', to: 'b', ttl_ms: -5 }, { as: 'a', to: 'b', ttl_ms: 1.5 },
  { as: 'a', to: 'b', ttl_ms: '5' }, { as: 'a', to: 'b', ttl_ms: null }, { as: 'a', to: 'b', text: 'x', extra: 1, priority: 'bad' }
]

/** zod's outcome: the parsed value as JSON (fields in order), or undefined when it refuses */
function viaZod (v: unknown): string | undefined {
  const r = sendSchema.safeParse(v)
  return r.success ? JSON.stringify(r.data) : undefined
}

describe('host - the hand-written check of send parameters', () => {
  it('accepts every valid input, giving what zod gives (same fields, same order)', () => {
    for (const v of VALID) {
      const want = viaZod(v)
      assert.ok(want !== undefined, `zod accepts ${JSON.stringify(v)}`)
      const got = checkSendParams(JSON.parse(JSON.stringify(v)))
      assert.equal(JSON.stringify(got), want, JSON.stringify(v))
      assert.deepEqual(got, sendSchema.parse(v))
    }
  })

  it('refuses every input zod refuses', () => {
    for (const v of INVALID) {
      assert.equal(viaZod(v), undefined, `zod refuses ${JSON.stringify(v)}`)
      assert.equal(checkSendParams(v), undefined, `the check refuses ${JSON.stringify(v)}`)
    }
  })

  it('agrees with zod on thousands of generated inputs', () => {
    let seed = 7
    const rand = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return (seed >>> 16) % n }
    const pick = <T>(xs: T[]): T => xs[rand(xs.length)]
    const values = (): unknown => pick([
      'a', '', 'x'.repeat(256), 'x'.repeat(257), 'high', 'kernel', 'MESSAGE', 0, 1, -1, 1.5, 60_000, true, false, null,
      [], ['a'], ['a', 1], {}, { text: 'x' }, { options: ['o'] }, { options: 'o' }, { bad: 'x' }, { context: null }
    ])
    const keys = ['as', 'to', 'text', 'signal', 'payload', 'conversation_id', 'in_reply_to', 'session_id', 'return_to', 'priority', 'requires_reply', 'zone', 'files', 'ttl_ms', 'other']
    const good: Record<string, unknown[]> = {
      text: ['', 't'], signal: ['ESCALATE'], payload: [{}, { text: 'x', options: ['o'] }], conversation_id: ['c'], in_reply_to: ['r'], session_id: ['s'],
      return_to: ['did:key:z'], priority: ['low', 'normal'], requires_reply: [true], zone: ['project'], files: [[], ['f']], ttl_ms: [1000], other: ['x']
    }
    let accepted = 0
    for (let i = 0; i < 20_000; i++) {
      const v: Record<string, unknown> = rand(4) > 0 ? { as: 'a', to: 'b' } : {}
      for (let k = rand(5); k > 0; k--) {
        const key = pick(keys)
        v[key] = rand(3) > 0 && good[key] !== undefined ? pick(good[key]) : values()
      }
      const raw = JSON.parse(JSON.stringify(v)) as unknown
      const want = viaZod(raw)
      const got = checkSendParams(raw)
      assert.equal(got === undefined ? undefined : JSON.stringify(got), want, JSON.stringify(v))
      if (want !== undefined) accepted++
    }
    assert.ok(accepted > 1000 && accepted < 19_000, `both outcomes were exercised (${accepted} accepted)`)
  })

  it('through the control socket: valid params reach the method as zod parses them, invalid ones get zod\'s error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctl-send-'))
    const sock = join(dir, 's.sock')
    const server = new ControlServer(sock, { send: method({ params: sendSchema, fast: checkSendParams, call: async (p) => p }) }, silentLogger)
    await server.start()
    const c = await ControlClient.connect(sock)
    try {
      for (const v of VALID) assert.deepEqual(await c.request('send', v), sendSchema.parse(v))
      await assert.rejects(c.request('send', { as: 'a', to: '' }), { code: 'INVALID_ARGUMENT', message: 'invalid argument to: String must contain at least 1 character(s)' })
      await assert.rejects(c.request('send', { as: 'a', to: 'b', ttl_ms: 1.5 }), { code: 'INVALID_ARGUMENT', message: 'invalid argument ttl_ms: Expected integer, received float' })
      await assert.rejects(c.request('send', { as: 'a', to: 'b', payload: { options: [1] } }), { code: 'INVALID_ARGUMENT', message: 'invalid argument payload.options.0: Expected string, received number' })
      await assert.rejects(c.request('send', { to: 'b', extra: 1 }), { code: 'INVALID_ARGUMENT', message: 'invalid argument as: Required' })
      await assert.rejects(c.request('send', { as: 'a', to: 'b', extra: 1 }), { code: 'INVALID_ARGUMENT', message: "invalid argument (params): Unrecognized key(s) in object: 'extra'" })
    } finally {
      c.close()
      await server.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
