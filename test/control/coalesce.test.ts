// TurnWriter against its reference (coalesce + one socket.write per write):
// over a real Unix socket, the same turns of writes (reply lines, Buffers,
// both mixed, past the high-water mark) give the reader the same bytes in the
// same order and the writer the same answers (false once the buffer reaches
// its high-water mark); a turn of strings is one socket write.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer, connect, type Server, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { coalesce, TurnWriter } from '../../src/control/coalesce.js'

type Part = string | Uint8Array

/** A turn of writes: lines (some non-ASCII), Buffers, large ones. */
function turns (seed: number): Part[][] {
  let s = seed
  const next = (n: number): number => { s = (s * 1103515245 + 12345) % 2147483648; return Math.floor(s / 65536) % n }
  const out: Part[][] = []
  for (let t = 0; t < 60; t++) {
    const turn: Part[] = []
    const n = [1, 1, 2, 5, 40, 300][next(6)]
    const kind = next(3) // 0: strings, 1: Buffers, 2: mixed
    for (let k = 0; k < n; k++) {
      const big = next(50) === 0
      const text = `{"id":${t * 1000 + k},"result":{"id":"01JE${'X'.repeat(22)}","note":"${next(4) === 0 ? 'é→😀' : 'ok'}${big ? 'y'.repeat(40_000) : ''}"}}\n`
      const buffer = kind === 1 || (kind === 2 && next(2) === 0)
      turn.push(buffer ? Buffer.from(text) : text)
    }
    out.push(turn)
  }
  return out
}

async function pair (): Promise<{ server: Server, writer: Socket, received: () => Promise<Buffer>, path: string, dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'amesh-coalesce-'))
  const path = join(dir, 's.sock')
  const chunks: Buffer[] = []
  let ended: () => void = () => {}
  const done = new Promise<void>((resolve) => { ended = resolve })
  const server = createServer((s) => { s.on('data', (c: Buffer) => chunks.push(c)); s.on('end', () => ended()) })
  await new Promise<void>((resolve) => server.listen(path, resolve))
  const writer = connect(path)
  await new Promise<void>((resolve) => writer.once('connect', resolve))
  return { server, writer, path, dir, received: async () => { await done; return Buffer.concat(chunks) } }
}

/** Write every turn (each in its own turn of the event loop), then end; the reader's bytes and each write's answer. */
async function run (all: Part[][], write: (socket: Socket, onRoom: () => void) => (data: Part) => boolean): Promise<{ bytes: Buffer, answers: boolean[], writes: number }> {
  const p = await pair()
  try {
    return await turnsThrough(p, all, write)
  } finally {
    close(p)
  }
}

/** The socket pair's ends closed and its directory removed, also after a failed assertion. */
function close (p: { server: Server, writer: Socket, dir: string }): void {
  p.writer.destroy()
  p.server.close()
  rmSync(p.dir, { recursive: true, force: true })
}

/** Each turn's answers; after a turn with a false one, room is told (the socket's 'drain' or the writer's onRoom), as a connection waits for. */
async function turnsThrough (p: Awaited<ReturnType<typeof pair>>, all: Part[][], write: (socket: Socket, onRoom: () => void) => (data: Part) => boolean): Promise<{ bytes: Buffer, answers: boolean[], writes: number }> {
  let writes = 0
  const real = p.writer.write.bind(p.writer) as (data: Part) => boolean
  ;(p.writer as unknown as { write: (data: Part) => boolean }).write = (data: Part) => { writes++; return real(data) }
  let rooms = 0
  let wake = (): void => {}
  const room = (): void => { rooms++; wake() }
  p.writer.on('drain', room)
  const put = write(p.writer, room)
  const answers: boolean[] = []
  for (const turn of all) {
    const before = rooms
    const answered = turn.map((part) => put(part))
    answers.push(...answered)
    await new Promise((resolve) => setImmediate(resolve))
    if (answered.includes(false)) {
      const deadline = Date.now() + 5000
      while (rooms === before) {
        assert.ok(Date.now() < deadline, 'a false answer is followed by room')
        await new Promise<void>((resolve) => { wake = resolve; setTimeout(resolve, 50) })
      }
    }
    while (p.writer.writableLength > 0) await new Promise((resolve) => p.writer.once('drain', resolve))
  }
  p.writer.end()
  const bytes = await p.received()
  return { bytes, answers, writes }
}

describe('control - one socket write per turn (TurnWriter)', () => {
  for (const seed of [1, 2, 3]) {
    it(`gives the reader the bytes and the writer the answers of its reference (turns ${seed})`, async () => {
      const all = turns(seed)
      const reference = await run(all, (socket) => (data) => { coalesce(socket); return socket.write(data) })
      // Buffers handed over (as the client's request frames), and lent (written at once, as pooled follow frames)
      const fast = await run(all, (socket, onRoom) => { const w = new TurnWriter(socket, onRoom); return (data) => w.write(data, true) })
      const lent = await run(all, (socket, onRoom) => { const w = new TurnWriter(socket, onRoom); return (data) => w.write(data) })
      assert.equal(fast.bytes.length, reference.bytes.length)
      assert.ok(fast.bytes.equals(reference.bytes))
      assert.ok(lent.bytes.equals(reference.bytes))
      assert.deepEqual(fast.answers, reference.answers)
      assert.ok(reference.answers.includes(false), 'some turns reach the high-water mark')
      assert.ok(fast.writes < lent.writes && lent.writes < reference.writes, `${fast.writes} and ${lent.writes} socket writes against ${reference.writes}`)
    })
  }

  it('hands a turn of strings to the socket as two writes (the first at once), a lent Buffer at once, and a destroyed socket drops what was queued', async () => {
    const p = await pair()
    try {
      let writes = 0
      const real = p.writer.write.bind(p.writer) as (data: Part) => boolean
      ;(p.writer as unknown as { write: (data: Part) => boolean }).write = (data: Part) => { writes++; return real(data) }
      const w = new TurnWriter(p.writer)
      for (let k = 0; k < 100; k++) w.write(`line ${k}\n`)
      assert.equal(writes, 1, 'the first write of the turn leaves at once')
      assert.equal(w.length - p.writer.writableLength, 9 * 7 + 90 * 8)
      await new Promise((resolve) => setImmediate(resolve))
      assert.equal(writes, 2)
      // a lent Buffer leaves at once, after what was queued before it
      w.write('a\n')
      const lentBuffer = Buffer.from('b\n')
      w.write(lentBuffer)
      assert.equal(writes, 4)
      w.write('lost\n')
      p.writer.destroy()
      await new Promise((resolve) => setImmediate(resolve))
      assert.equal(writes, 4)
    } finally {
      close(p)
    }
  })
})
