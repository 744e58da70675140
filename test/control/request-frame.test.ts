// Binary request framing (src/control/request-frame.ts): a frame decodes to
// exactly the request its JSON line parses to; the daemon's reader splits
// lines and frames the same however the bytes are cut; every malformed frame
// gets MALFORMED_REQUEST_FRAME; the client uses frames only once the daemon
// said it reads them, and JSON lines for what a frame cannot carry.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ControlClient } from '../../src/control/client.js'
import { FRAME_HEAD, FRAME_MARK } from '../../src/control/frame-head.js'
import { decodeRequestFrame, encodeRequestFrame, FRAMING_METHOD, MalformedRequestFrameError, type RequestFrame } from '../../src/control/request-frame.js'
import { RequestReader } from '../../src/control/request-reader.js'
import { MAX_LINE_BYTES } from '../../src/control/protocol.js'

/** the request as the daemon parses its JSON line */
function asLine (id: number, method: string, params: unknown): unknown {
  return JSON.parse(JSON.stringify({ id, method, params }))
}

function frameOf (bytes: Buffer): RequestFrame {
  assert.equal(bytes[0], FRAME_MARK)
  assert.equal(bytes.readUInt32BE(5), bytes.length - FRAME_HEAD)
  return { id: bytes.readUInt32BE(1), body: bytes.subarray(FRAME_HEAD) }
}

const TEXTS = ['', 'plain', 'é', 'line\nwith "quotes" and \\ and \u0000 and \t', 'emoji 😀 and 中文', 'x'.repeat(70_000), '\uffff\u0080\u07ff\u0800']

/** A frame body from its parts: head JSON, slot lengths (null: no text), text bytes. */
function body (head: string | Buffer, slots: Array<number | null>, texts: Buffer, headLength?: number): RequestFrame {
  const h = typeof head === 'string' ? Buffer.from(head) : head
  const out = Buffer.alloc(8 + h.length + 4 * slots.length + texts.length)
  out.writeUInt32BE(headLength ?? h.length, 0)
  h.copy(out, 4)
  let at = 4 + h.length
  out.writeUInt32BE(slots.length, at)
  at += 4
  for (const s of slots) { out.writeUInt32BE(s ?? 0xffffffff, at); at += 4 }
  texts.copy(out, at)
  return { id: 7, body: out }
}

describe('control - binary request frames', () => {
  it('a send frame decodes to the request its JSON line parses to, for every kind of text and for none', () => {
    const rest = { as: 'al', to: 'bob', signal: 'ASK', payload: { context: { k: [1, 'é'] } }, priority: 'high' }
    for (const text of [...TEXTS, undefined]) {
      const params = text === undefined ? rest : { ...rest, text }
      const frame = encodeRequestFrame(41, 'send', params)
      assert.ok(frame !== undefined)
      assert.deepEqual(decodeRequestFrame(frameOf(frame)), asLine(41, 'send', params))
    }
  })

  it('a send.batch frame decodes to its JSON line, entries with and without text, in order', () => {
    const sends = [...TEXTS.map((text, k) => ({ as: 'al', to: `n${k}`, text })), { as: 'al', to: 'bob', payload: { text: 'in the payload' } }, { as: 'al', to: 'x', text: undefined }]
    const frame = encodeRequestFrame(3, 'send.batch', { sends })
    assert.ok(frame !== undefined)
    assert.deepEqual(decodeRequestFrame(frameOf(frame)), asLine(3, 'send.batch', { sends }))
  })

  it('leaves to JSON lines what a frame does not carry: other methods, a text with a lone surrogate, a text that is no string, odd batch params', () => {
    assert.equal(encodeRequestFrame(1, 'status', {}), undefined)
    assert.equal(encodeRequestFrame(1, 'send', { as: 'a', to: 'b', text: 'bad \ud800 half' }), undefined)
    assert.equal(encodeRequestFrame(1, 'send', { as: 'a', to: 'b', text: 5 }), undefined)
    assert.equal(encodeRequestFrame(1, 'send.batch', { sends: [{ as: 'a', to: 'b', text: '\udc00' }] }), undefined)
    assert.equal(encodeRequestFrame(1, 'send.batch', { sends: ['x'] }), undefined)
    assert.equal(encodeRequestFrame(1, 'send.batch', { sends: [], extra: 1 }), undefined)
  })

  it('refuses each malformed frame with MALFORMED_REQUEST_FRAME', () => {
    const head = JSON.stringify({ method: 'send', params: { as: 'a', to: 'b' } })
    const cases: Array<[string, RequestFrame]> = [
      ['no head', { id: 1, body: Buffer.alloc(2) }],
      ['head past the body', body(head, [], Buffer.alloc(0), 10_000)],
      ['head not JSON', body('{nope', [null], Buffer.alloc(0))],
      ['no method', body('{"params":{}}', [null], Buffer.alloc(0))],
      ['a method frames do not carry', body('{"method":"status","params":{}}', [], Buffer.alloc(0))],
      ['no slot count', { id: 1, body: body(head, [], Buffer.alloc(0)).body.subarray(0, 4 + head.length) }],
      ['more slots than fit', body(head, [1, 1, 1], Buffer.alloc(0))],
      ['two slots for a send', body(head, [null, null], Buffer.alloc(0))],
      ['text past the body', body(head, [5], Buffer.from('abc'))],
      ['bytes after the last text', body(head, [1], Buffer.from('abc'))],
      ['text not UTF-8', body(head, [2], Buffer.from([0xc3, 0x28]))],
      ['text in the head', body(JSON.stringify({ method: 'send', params: { as: 'a', to: 'b', text: 'x' } }), [1], Buffer.from('y'))],
      ['params no object', body('{"method":"send","params":3}', [null], Buffer.alloc(0))],
      ['batch slot count', body('{"method":"send.batch","params":{"sends":[{},{}]}}', [null], Buffer.alloc(0))],
      ['batch without sends', body('{"method":"send.batch","params":{}}', [], Buffer.alloc(0))],
      ['batch entry no object', body('{"method":"send.batch","params":{"sends":[1]}}', [null], Buffer.alloc(0))]
    ]
    for (const [what, frame] of cases) {
      assert.throws(() => decodeRequestFrame(frame), (err: unknown) => err instanceof MalformedRequestFrameError && (err as { code: string }).code === 'MALFORMED_REQUEST_FRAME', what)
    }
  })

  it('the reader gives the same lines and frames, in order, however the bytes are cut', () => {
    const f1 = encodeRequestFrame(1, 'send', { as: 'a', to: 'b', text: 'one\n{"not":"a line"}\n' }) as Buffer
    const f2 = encodeRequestFrame(3, 'send.batch', { sends: [{ as: 'a', to: 'b', text: 'é😀' }] }) as Buffer
    const stream = Buffer.concat([f1, Buffer.from('{"id":2,"method":"status"}\n\n  \n'), f2, Buffer.from('{"id":4,"method":"x","params":{"t":"é"}}\n')])
    const want = ['frame 1', 'line {"id":2,"method":"status"}', 'frame 3', 'line {"id":4,"method":"x","params":{"t":"é"}}']
    for (let size = 1; size <= stream.length; size += size < 40 ? 1 : 97) {
      const seen: string[] = []
      const bodies: Buffer[] = []
      const r = new RequestReader((l) => seen.push(`line ${l}`), (f) => { seen.push(`frame ${f.id}`); bodies.push(Buffer.from(f.body)) })
      for (let i = 0; i < stream.length; i += size) r.push(stream.subarray(i, i + size))
      assert.deepEqual(seen, want, `chunks of ${size}`)
      assert.deepEqual(bodies, [f1.subarray(FRAME_HEAD), f2.subarray(FRAME_HEAD)])
    }
  })

  it('a scratch reader gives the same lines and frames however the bytes are cut, frames joined from several chunks in its reused buffer (transient)', () => {
    const big = (id: number, c: string): Buffer => encodeRequestFrame(id, 'send', { as: 'a', to: 'b', text: c.repeat(3000) }) as Buffer
    const f1 = big(1, 'é')
    const f2 = encodeRequestFrame(3, 'send.batch', { sends: [{ as: 'a', to: 'b', text: 'é😀' }] }) as Buffer
    const f3 = big(5, 'x')
    const f4 = encodeRequestFrame(6, 'send', { as: 'a', to: 'b', text: '' }) as Buffer
    const stream = Buffer.concat([f1, Buffer.from('{"id":2,"method":"status"}\n'), f2, f3, f4, Buffer.from('{"id":4,"method":"x"}\n'), f1])
    const want = ['frame 1', 'line {"id":2,"method":"status"}', 'frame 3', 'frame 5', 'frame 6', 'line {"id":4,"method":"x"}', 'frame 1']
    const wantBodies = [f1, f2, f3, f4, f1].map((f) => f.subarray(FRAME_HEAD))
    for (let size = 1; size <= stream.length; size += size < 40 ? 1 : size < 2000 ? 97 : 1531) {
      const seen: string[] = []
      const bodies: Buffer[] = []
      let transient = 0
      const r = new RequestReader((l) => seen.push(`line ${l}`), (f, t) => { seen.push(`frame ${f.id}`); bodies.push(Buffer.from(f.body)); if (t) transient++ }, MAX_LINE_BYTES, true)
      for (let i = 0; i < stream.length; i += size) r.push(stream.subarray(i, i + size))
      assert.deepEqual(seen, want, `chunks of ${size}`)
      assert.deepEqual(bodies, wantBodies, `chunks of ${size}`)
      // the 6 KB frames span chunks up to their size: read from the scratch
      if (size < f1.length / 2) assert.ok(transient >= 3, `chunks of ${size}: ${transient} transient`)
    }
  })

  it('the reader refuses a frame or a line over its bound', () => {
    const r = new RequestReader(() => {}, () => {}, 100)
    const head = Buffer.alloc(FRAME_HEAD)
    head.writeUInt32BE(101, 5)
    assert.throws(() => r.push(head), /frame of 101 bytes/)
    const l = new RequestReader(() => {}, () => {}, 10)
    l.push(Buffer.from('12345'))
    assert.throws(() => l.push(Buffer.from('678901')), /longer than 10/)
  })

  it('the reader bounds a line in UTF-16 code units, as the text reader before it: a non-ASCII line of more bytes than the bound but no more units passes', () => {
    const lines: string[] = []
    const r = new RequestReader((l) => lines.push(l), () => {}, 10)
    for (const piece of ['éé', 'éééé', 'éé😀', '\n']) r.push(Buffer.from(piece)) // 10 units, 22 bytes
    assert.deepEqual(lines, ['éééééééé😀'])
    const over = new RequestReader(() => {}, () => {}, 10)
    over.push(Buffer.from('éééééé'))
    assert.throws(() => over.push(Buffer.from('ééééé')), /longer than 10/, '11 units')
  })

  describe('the client', () => {
    let dir: string
    let server: Server
    const sockets: Socket[] = []
    afterEach(() => { for (const s of sockets.splice(0)) s.destroy(); server?.close(); rmSync(dir, { recursive: true, force: true }) })

    /** A daemon stand-in that records what arrives and answers every request with {} (control.framing: `reads`). */
    async function fake (reads: 'binary' | 'unknown'): Promise<{ path: string, got: Array<string | RequestFrame> }> {
      dir = mkdtempSync(join(tmpdir(), 'amesh-rf-'))
      const path = join(dir, 'sock')
      const got: Array<string | RequestFrame> = []
      server = createServer((s) => {
        sockets.push(s)
        const answer = (id: number, method: string): void => {
          const reply = method !== FRAMING_METHOD ? { id, result: {} } : reads === 'binary' ? { id, result: { requests: ['ndjson', 'binary'], binary_methods: ['send', 'send.batch'] } } : { id, error: { code: 'UNKNOWN_METHOD', message: 'no' } }
          s.write(JSON.stringify(reply) + '\n')
        }
        const reader = new RequestReader((line) => { got.push(line); const r = JSON.parse(line) as { id: number, method: string }; answer(r.id, r.method) },
          (f) => { got.push({ id: f.id, body: Buffer.from(f.body) }); answer(f.id, decodeRequestFrame(f).method) })
        s.on('data', (c: Buffer) => reader.push(c))
      })
      await new Promise<void>((resolve) => server.listen(path, resolve))
      return { path, got }
    }

    it('asks once, then sends send and send.batch as frames and everything else as lines, in call order', async () => {
      const { path, got } = await fake('binary')
      const c = await ControlClient.connect(path)
      await Promise.all([
        c.request('status'),
        c.call('send', { as: 'a', to: 'b', text: 'é' }),
        c.request('status'),
        c.call('send.batch', { sends: [{ as: 'a', to: 'b', text: 'x' }] }),
        c.call('send', { as: 'a', to: 'b', text: 'lone \ud800' })
      ])
      c.close()
      const kinds = got.map((g) => typeof g === 'string' ? (JSON.parse(g) as { method: string }).method : `frame:${decodeRequestFrame(g).method}`)
      assert.deepEqual(kinds, ['status', FRAMING_METHOD, 'frame:send', 'status', 'frame:send.batch', 'send'])
      const sent = got[2] as RequestFrame
      assert.deepEqual(decodeRequestFrame(sent), { id: sent.id, method: 'send', params: { as: 'a', to: 'b', text: 'é' } })
    })

    it('keeps to JSON lines with a daemon that does not know the question', async () => {
      const { path, got } = await fake('unknown')
      const c = await ControlClient.connect(path)
      await c.call('send', { as: 'a', to: 'b', text: 'x' })
      await c.call('send', { as: 'a', to: 'b', text: 'y' })
      c.close()
      assert.ok(got.every((g) => typeof g === 'string'))
      assert.deepEqual(got.map((g) => (JSON.parse(g as string) as { method: string }).method), [FRAMING_METHOD, 'send', 'send'])
    })
  })
})
