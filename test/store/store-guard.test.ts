import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Committer, batchTarget, openDb, type BatchTarget, type WriteOp } from '../../src/store/db.js'
import { InboxStore } from '../../src/store/inbox.js'
import { MIB, StoreGuard, isNoSpace } from '../../src/store/store-guard.js'
import { ulid } from '../../src/util/ulid.js'
import { waitFor } from '../utils/hosts.js'

const put = (key: string): WriteOp => ({ type: 'put', key, value: new Uint8Array([1, 2, 3]) })
const enospc = (): Error => Object.assign(new Error('IO error: store/000003.log: No space left on device'), { code: 'LEVEL_IO_ERROR' })

/** A batch target over a map that fails the writes it is told to. */
class FlakyTarget implements BatchTarget {
  readonly rows = new Map<string, Uint8Array>()
  failNext: Error[] = []
  async batch (ops: WriteOp[]): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve))
    const err = this.failNext.shift()
    if (err !== undefined) throw err
    for (const op of ops) if (op.type === 'put') this.rows.set(op.key, op.value); else this.rows.delete(op.key)
  }
}

function guardFor (opts: { free?: () => number, reopen?: () => Promise<void> } = {}): { guard: StoreGuard, logs: string[], reopens: () => number } {
  const logs: string[] = []
  let reopens = 0
  const guard = new StoreGuard({
    path: tmpdir(),
    minFreeBytes: 16 * MIB,
    reopen: opts.reopen ?? (async () => { reopens++ }),
    log: (m) => logs.push(m),
    onFatal: (err) => { throw err },
    measure: async () => opts.free?.() ?? 1024 * MIB
  })
  return { guard, logs, reopens: () => reopens }
}

describe('store guard - storage faults are fatal to acknowledging, never to data', () => {
  it('tells a full disk from other I/O errors', () => {
    assert.equal(isNoSpace(enospc()), true)
    assert.equal(isNoSpace(Object.assign(new Error('write failed'), { cause: { code: 'ENOSPC' } })), true)
    assert.equal(isNoSpace(new Error('IO error: Input/output error')), false)
  })

  it('a failed batch refuses itself, everything queued behind it and every later write until the store is reopened; then writes are taken again', async () => {
    const { guard, logs, reopens } = guardFor()
    await guard.start()
    const target = new FlakyTarget()
    const c = new Committer(target, 'always', guard)
    await c.write([put('a')])
    target.failNext = [enospc()]
    const results = await Promise.allSettled([c.write([put('b')]), c.write([put('c')]), c.write([put('d')])])
    assert.deepEqual(results.map((r) => r.status === 'rejected' ? (r.reason as { code: string }).code : 'ok'), ['STORE_FULL', 'STORE_FULL', 'STORE_FULL'])
    assert.deepEqual([...target.rows.keys()], ['a'], 'nothing after the failure was written')
    await assert.rejects(c.write([put('e')]), { name: 'StoreFullError' })
    await c.drain() // a drain is no write: it settles
    await waitFor(async () => guard.state === 'ok' || undefined, 10_000, 'the reopen')
    assert.equal(reopens(), 1)
    await c.write([put('f')])
    assert.deepEqual([...target.rows.keys()], ['a', 'f'])
    assert.equal(guard.health().faults, 1)
    assert.ok(logs.some((l) => l.includes('store faulted')) && logs.some((l) => l.includes('store reopened')), logs.join('\n'))
    guard.stop()
  })

  it('an I/O error that is not a full disk refuses with STORE_FAULT; an unsynced write that fails faults the store too', async () => {
    const { guard } = guardFor({ reopen: async () => await new Promise(() => {}) })
    await guard.start()
    const target = new FlakyTarget()
    const c = new Committer(target, 'batch', guard)
    target.failNext = [new Error('IO error: Input/output error')]
    await assert.rejects(c.writeUnsynced([put('x')]), { code: 'STORE_FAULT' })
    await assert.rejects(c.write([put('y')]), { code: 'STORE_FAULT' })
    assert.equal(target.rows.size, 0)
    guard.stop()
  })

  it('under the low-space watermark writes are refused (STORE_FULL) without any failure, and taken again once space returns', async () => {
    let free = 8 * MIB
    const { guard } = guardFor({ free: () => free })
    await guard.start()
    assert.equal(guard.state, 'low-space')
    const target = new FlakyTarget()
    const c = new Committer(target, 'batch', guard)
    await assert.rejects(c.write([put('a')]), (err: Error & { code?: string }) => err.code === 'STORE_FULL' && /nearly full/.test(err.message))
    free = 512 * MIB
    await waitFor(async () => guard.state === 'ok' || undefined, 10_000, 'space to return')
    await c.write([put('a')])
    assert.equal(target.rows.size, 1)
    assert.equal(guard.health().faults, 0, 'a watermark refusal is not a fault')
    guard.stop()
  })

  it('a reopen of a real LevelDB after a refused append keeps the inbox gap-free and every acknowledged entry', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'amg-'))
    const db = await openDb(join(dir, 'store'))
    const { guard } = guardFor({ reopen: async () => { await db.close(); await db.open() } })
    await guard.start()
    try {
      const c = new Committer(batchTarget(db), 'batch', guard)
      const inbox = new InboxStore(db, c, 1000)
      const item = (k: number): { nodeId: string, packetId: string, packet: Uint8Array } => ({ nodeId: 'did:key:zN', packetId: '', packet: new Uint8Array([k]) })
      const ids = [ulid(), ulid(), ulid()]
      const first = await inbox.append([{ ...item(1), packetId: ids[0] }])
      assert.equal('seq' in first[0] && first[0].seq, 1)
      guard.fault(enospc())
      await assert.rejects(inbox.append([{ ...item(2), packetId: ids[1] }]), { code: 'STORE_FULL' })
      await waitFor(async () => guard.state === 'ok' || undefined, 10_000, 'the reopen')
      const again = await inbox.append([{ ...item(2), packetId: ids[1] }, { ...item(3), packetId: ids[2] }])
      assert.deepEqual(again.map((r) => 'seq' in r ? [r.seq, r.duplicate] : 'error'), [[2, false], [3, false]], 'the refused id was not remembered and its seq was given back')
      assert.deepEqual((await inbox.read('did:key:zN', 0, 10)).map((e) => e.seq), [1, 2, 3])
    } finally {
      guard.stop()
      await db.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
