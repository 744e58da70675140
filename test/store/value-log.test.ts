// The value log on real files: what a separated put stores in LevelDB's place
// (its header, then a pointer), what read() gives back, and what it says when
// the bytes on disk are damaged or their segment is gone.
import { strict as assert } from 'node:assert'
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isSeparated, isValueGone, pointerOf, POINTER_BYTES, SEPARATE_MIN_BYTES, SEPARATED_FORMAT, ValueLog } from '../../src/store/value-log.js'
import type { WriteOp } from '../../src/store/write-op.js'

const HEAD = Buffer.from([1, 9, 8, 7])

function value (fill: number, bodyBytes: number): Uint8Array {
  return Buffer.concat([HEAD, Buffer.alloc(bodyBytes, fill)])
}

describe('store - value log segments', () => {
  let dir: string
  let log: ValueLog | undefined
  beforeEach(() => { dir = mkdtempSync(join(tmpdir(), 'amesh-vlog-')) })
  afterEach(() => { log?.close(); log = undefined; rmSync(dir, { recursive: true, force: true }) })

  it('a large put is stored as its header and a pointer, reads back byte for byte, and small or unsplit puts pass unchanged', async () => {
    log = ValueLog.open(join(dir, 'values'), true)
    const big = value(0xab, 64 * 1024)
    const small = value(0xcd, SEPARATE_MIN_BYTES - 1)
    const unsplit = value(0xef, 64 * 1024)
    const ops: WriteOp[] = [
      { type: 'put', key: 'i!big', value: big, split: HEAD.byteLength },
      { type: 'put', key: 'i!small', value: small, split: HEAD.byteLength },
      { type: 'put', key: 'i!unsplit', value: unsplit },
      { type: 'del', key: 'i!old' }
    ]
    assert.equal(log.wants(ops), true)
    const { ops: out, done } = await log.append(ops)
    done()
    assert.equal(out.length, 4)
    const stored = out[0] as { value: Uint8Array }
    assert.equal(isSeparated(stored.value), true)
    assert.equal(stored.value.byteLength, HEAD.byteLength + POINTER_BYTES)
    assert.equal(stored.value[0], SEPARATED_FORMAT)
    assert.deepEqual(Buffer.from(stored.value.subarray(1, HEAD.byteLength)), HEAD.subarray(1))
    assert.equal(pointerOf(stored.value).length, 64 * 1024)
    assert.equal(out[1], ops[1])
    assert.equal(out[2], ops[2])
    assert.equal(out[3], ops[3])
    assert.deepEqual(Buffer.from(log.read(stored.value)), Buffer.from(big.subarray(HEAD.byteLength)))
    const roomy = log.read(stored.value, 5)
    assert.equal(roomy.byteLength, 5 + 64 * 1024)
    assert.deepEqual(Buffer.from(roomy.subarray(5)), Buffer.from(big.subarray(HEAD.byteLength)))
    assert.equal(log.wants([ops[1], ops[2], ops[3]]), false)
  })

  it('segment files are 0600; a damaged value is a StoreFaultError, a deleted segment a ValueGoneError', async () => {
    log = ValueLog.open(join(dir, 'values'), true)
    assert.equal(statSync(join(dir, 'values')).mode & 0o777, 0o700)
    const { ops: out, done } = await log.append([{ type: 'put', key: 'o!a', value: value(1, 20_000), split: HEAD.byteLength }])
    done()
    const files = readdirSync(join(dir, 'values'))
    assert.deepEqual(files, ['00000001.vlog'])
    const path = join(dir, 'values', files[0])
    assert.equal(statSync(path).mode & 0o777, 0o600)
    const stored = (out[0] as { value: Uint8Array }).value
    const { offset } = pointerOf(stored)
    const bytes = readFileSync(path)
    bytes[offset + 100] ^= 0xff
    writeFileSync(path, bytes)
    log.close()
    assert.throws(() => log?.read(stored), (err: Error) => err.name === 'StoreFaultError' && /damaged or missing/.test(err.message))
    log.segments.delete(pointerOf(stored).segment)
    assert.throws(() => log?.read(stored), (err: unknown) => isValueGone(err))
  })

  it('a reopened log keeps the earlier segments readable and appends to a new one', async () => {
    log = ValueLog.open(join(dir, 'values'), false)
    const first = await log.append([{ type: 'put', key: 'i!1', value: value(3, 10_000), split: HEAD.byteLength }])
    first.done()
    log.close()
    log = ValueLog.open(join(dir, 'values'), false)
    const second = await log.append([{ type: 'put', key: 'i!2', value: value(4, 10_000), split: HEAD.byteLength }])
    second.done()
    const a = (first.ops[0] as { value: Uint8Array }).value
    const b = (second.ops[0] as { value: Uint8Array }).value
    assert.equal(pointerOf(a).segment, 1)
    assert.equal(pointerOf(b).segment, 2)
    assert.deepEqual(readdirSync(join(dir, 'values')).sort(), ['00000001.vlog', '00000002.vlog'])
    assert.deepEqual(Buffer.from(log.read(a)), Buffer.alloc(10_000, 3))
    assert.deepEqual(Buffer.from(log.read(b)), Buffer.alloc(10_000, 4))
    assert.equal(log.bytes(), statSync(join(dir, 'values', '00000001.vlog')).size + statSync(join(dir, 'values', '00000002.vlog')).size)
  })
})
