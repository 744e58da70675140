// The store writes its LevelDB tables in BLOCK_BYTES blocks, not LevelDB's
// default 4 KiB: told apart by what the tables hold on disk. The same stored
// packets (their text, ids and grant chains repeat from packet to packet, as
// T2's do) compress better in larger blocks, so a store opened by openDb holds
// them in fewer table bytes than one opened with the default.
import { strict as assert } from 'node:assert'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Level } from 'level'
import { BLOCK_BYTES, openDb, type RawDb } from '../../src/store/db.js'
import { generateNodeKey } from '../../src/identity/node-key.js'
import { ulid } from '../../src/util/ulid.js'

const COUNT = 6000

function tableBytes (dir: string): number {
  return readdirSync(dir).filter((f) => f.endsWith('.ldb')).reduce((n, f) => n + statSync(join(dir, f)).size, 0)
}

async function fill (db: RawDb, from: string, to: string): Promise<void> {
  const enc = new TextEncoder()
  for (let i = 0; i < COUNT; i += 200) {
    const ops = Array.from({ length: 200 }, (_, k) => ({
      type: 'put' as const,
      key: `i!${to}!${String(i + k).padStart(12, '0')}`,
      value: enc.encode(JSON.stringify({ id: ulid(), from, to, text: `message ${i + k} ` + 'lorem ipsum dolor sit amet '.repeat(18), grant: 'x'.repeat(300) }))
    }))
    await db.batch(ops)
  }
  await (db as unknown as { compactRange: (a: string, b: string) => Promise<void> }).compactRange('i!', 'i!\xff')
}

describe('store - table block size', function () {
  this.timeout(60_000)
  const dirs: string[] = []
  after(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }) })

  it(`writes tables in ${BLOCK_BYTES}-byte blocks: the same packets take fewer table bytes than with LevelDB's default 4 KiB blocks, and read back whole`, async () => {
    const [from, to] = [generateNodeKey().id, generateNodeKey().id]
    const ours = mkdtempSync(join(tmpdir(), 'am-bs-'))
    const plain = mkdtempSync(join(tmpdir(), 'am-bs-'))
    dirs.push(ours, plain)
    const a = await openDb(ours)
    const b = new Level<string, Uint8Array>(plain, { keyEncoding: 'utf8', valueEncoding: 'view' })
    await b.open()
    try {
      await fill(a, from, to)
      await fill(b, from, to)
      const keys = []
      for await (const k of a.keys({ gt: 'i!', lt: 'i!\xff' })) keys.push(k)
      assert.equal(keys.length, COUNT, 'every entry reads back')
      assert.equal(keys[COUNT - 1], `i!${to}!${String(COUNT - 1).padStart(12, '0')}`)
    } finally {
      await a.close()
      await b.close()
    }
    const [mine, theirs] = [tableBytes(ours), tableBytes(plain)]
    assert.ok(mine > 0 && theirs > 0, 'both stores wrote tables')
    assert.ok(mine < 0.9 * theirs, `tables: ${mine} bytes in ${BLOCK_BYTES}-byte blocks against ${theirs} in 4 KiB blocks`)
  })
})
