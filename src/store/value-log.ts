// Large values beside LevelDB: the bytes of a large packet go once into an
// append-only segment file, and LevelDB holds a short pointer to them.
//
// LevelDB writes a value to its log, to its memtable, to a level-0 table at
// the flush, and again at each compaction on the way down (snappy and a CRC
// each time): ~208 µs of CPU per 64 KiB value in one process doing nothing
// else, and the outbox's values, acked within milliseconds, pay it as much as
// the inbox's. Here a value costs one copy into the page cache, one CRC and
// its share of one fdatasync (docs/PERFORMANCE.md, session 21).
//
// - Which values: a put whose op says where its header ends (`split`) and
//   whose rest is at least SEPARATE_MIN_BYTES. The header stays in LevelDB,
//   its first byte SEPARATED_FORMAT, followed by the pointer (separated()).
// - When: the Committer appends a batch's values to the log and, in the
//   synced modes, fdatasyncs it before it writes the batch, so every pointer
//   LevelDB holds names bytes already on disk; a value whose batch failed is
//   an unreferenced record, collected with its segment.
// - Segments: `<store>/values/<id: 8 digits>.vlog`, rolled at SEGMENT_BYTES;
//   a process appends only to a segment it made, so a torn tail from a crash
//   is never written after. A segment is deleted once no key in LevelDB
//   points into it (value-log-gc.ts).
// - Records: [hcrc u32][len u32][crc u32][key len u16][key utf8][value],
//   hcrc the CRC-32 of the bytes after it up to the value, crc the value's.
import { closeSync, fdatasync, fsync, mkdirSync, openSync, readSync, readdirSync, statSync, writev } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { crc32 } from 'node:zlib'
import { AmeshError, StoreFaultError, defineError } from '../util/errors.js'
import type { WriteOp } from './write-op.js'

/** The first byte of a value whose bytes past its header are in the value log. */
export const SEPARATED_FORMAT = 2
/** The least bytes past its header a value has to go to the log. */
export const SEPARATE_MIN_BYTES = 8 * 1024
/** A segment takes no more batches once it holds this many bytes. */
export const SEGMENT_BYTES = 64 * 1024 * 1024
/** [segment u32][offset u48][length u32][crc u32], after the value's header */
export const POINTER_BYTES = 18
export const RECORD_HEAD = 14
const SEGMENT_NAME = /^(\d{8})\.vlog$/

/** A value's bytes were in a segment that has since been deleted: the entry itself was deleted after this read began. */
export const ValueGoneError = defineError('ValueGoneError', 'VALUE_GONE')

const writevAsync = promisify(writev)
const fdatasyncAsync = promisify(fdatasync)
const fsyncAsync = promisify(fsync)

export interface Segment {
  id: number
  path: string
  fd?: number
  /** bytes of whole records (where the next append starts, for the active segment) */
  size: number
  /** records whose key may still point here: key -> the value's offset (undefined: not read yet, a segment of an earlier run) */
  keys?: Map<string, number>
  /** appends into it whose batch has not finished */
  writing: number
}

/** Reads the bytes a separated value points to. */
export interface ValueReader {
  /** The value's bytes, after `room` bytes left to the caller, in a new buffer. */
  read: (value: Uint8Array, room?: number) => Uint8Array
}

export function segmentName (id: number): string { return `${String(id).padStart(8, '0')}.vlog` }

/** Whether a stored value holds a pointer into the value log. */
export function isSeparated (value: Uint8Array): boolean { return value[0] === SEPARATED_FORMAT }

/** The pointer at the end of a separated value. */
export function pointerOf (value: Uint8Array): { segment: number, offset: number, length: number, crc: number } {
  const b = Buffer.from(value.buffer, value.byteOffset + value.byteLength - POINTER_BYTES, POINTER_BYTES)
  return { segment: b.readUInt32BE(0), offset: b.readUIntBE(4, 6), length: b.readUInt32BE(10), crc: b.readUInt32BE(14) }
}

/** The ops in which a value goes to the log: a put with a `split` and at least SEPARATE_MIN_BYTES past it. */
function separable (op: WriteOp): op is WriteOp & { type: 'put', split: number } {
  return op.type === 'put' && op.split !== undefined && op.value.byteLength - op.split >= SEPARATE_MIN_BYTES
}

/** The stored value of a separated put: its header, first byte SEPARATED_FORMAT, and the pointer. */
function separated (value: Uint8Array, split: number, segment: number, offset: number, crc: number): Uint8Array {
  const out = Buffer.allocUnsafe(split + POINTER_BYTES)
  out.set(value.subarray(0, split), 0)
  out[0] = SEPARATED_FORMAT
  out.writeUInt32BE(segment, split)
  out.writeUIntBE(offset, split + 4, 6)
  out.writeUInt32BE(value.byteLength - split, split + 10)
  out.writeUInt32BE(crc, split + 14)
  return out
}

/** A record's head: its header CRC, value length and CRC, key length, key. */
function recordHead (key: string, length: number, crc: number): Buffer {
  const keyLen = Buffer.byteLength(key)
  if (keyLen > 0xffff) throw new StoreFaultError('value log: key too long')
  const head = Buffer.allocUnsafe(RECORD_HEAD + keyLen)
  head.writeUInt32BE(length, 4)
  head.writeUInt32BE(crc, 8)
  head.writeUInt16BE(keyLen, 12)
  head.write(key, RECORD_HEAD, 'utf8')
  head.writeUInt32BE(crc32(head.subarray(4)), 0)
  return head
}

interface Placed { segment: Segment, buffers: Uint8Array[], start: number, end: number, keys: Array<[string, number]> }

/**
 * The value log of one store. append() and done() are called by the
 * Committer, one batch at a time; read() by the stores' decoders.
 */
export class ValueLog implements ValueReader {
  readonly segments = new Map<number, Segment>()
  private active?: Segment
  private nextId = 1
  /** a segment was sealed since the last collection */
  sealedSince = false
  /** called when the batch that sealed a segment is done (the collector's cue) */
  onSealed?: () => void

  constructor (readonly dir: string, private readonly sync: boolean) {}

  /** The segments an earlier run left (each read for its keys when first collected); appends go to a new one. */
  static open (dir: string, sync: boolean): ValueLog {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const log = new ValueLog(dir, sync)
    for (const name of readdirSync(dir)) {
      const m = SEGMENT_NAME.exec(name)
      if (m === null) continue
      const id = Number(m[1])
      log.segments.set(id, { id, path: join(dir, name), size: -1, writing: 0 })
      if (id >= log.nextId) log.nextId = id + 1
    }
    return log
  }

  /** Whether any value of these ops goes to the log. */
  wants (ops: WriteOp[]): boolean {
    for (const op of ops) if (separable(op)) return true
    return false
  }

  /**
   * Append the separable values of a batch (durably, when the log syncs) and
   * return the batch with their pointers instead, and the `done` to call once
   * the batch is written or has failed (its segments stay uncollected until then).
   */
  async append (ops: WriteOp[]): Promise<{ ops: WriteOp[], done: () => void }> {
    const out = ops.slice()
    const placed: Placed[] = []
    for (let k = 0; k < ops.length; k++) {
      const op = ops[k]
      if (!separable(op)) continue
      const body = op.value.subarray(op.split)
      const at = this.placeFor(placed, RECORD_HEAD + body.byteLength)
      const crc = crc32(body)
      const head = recordHead(op.key, body.byteLength, crc)
      const offset = at.end + head.byteLength
      at.buffers.push(head, body)
      at.keys.push([op.key, offset])
      at.end = offset + body.byteLength
      out[k] = { type: 'put', key: op.key, value: separated(op.value, op.split, at.segment.id, offset, crc) }
    }
    for (const p of placed) p.segment.writing++
    const sealing = placed.length > 0 && placed[placed.length - 1].start === 0 && this.sealedSince
    const done = (): void => {
      for (const p of placed) p.segment.writing--
      if (sealing) this.onSealed?.()
    }
    try {
      for (const p of placed) await this.writePlaced(p)
    } catch (err) {
      done()
      throw err
    }
    return { ops: out, done }
  }

  /** Where the next record of `bytes` goes: the active segment, or a new one when it is full. */
  private placeFor (placed: Placed[], bytes: number): Placed {
    let last = placed[placed.length - 1]
    const seg = last?.segment ?? this.active
    const used = last !== undefined ? last.end : (seg?.size ?? 0)
    if (seg === undefined || (used > 0 && used + bytes > SEGMENT_BYTES)) {
      last = { segment: this.roll(), buffers: [], start: 0, end: 0, keys: [] }
      placed.push(last)
    } else if (last === undefined) {
      last = { segment: seg, buffers: [], start: seg.size, end: seg.size, keys: [] }
      placed.push(last)
    }
    return last
  }

  /** Seal the active segment and make the next one (its file is made when first written). */
  private roll (): Segment {
    if (this.active !== undefined) this.sealedSince = true
    const id = this.nextId++
    const seg: Segment = { id, path: join(this.dir, segmentName(id)), size: 0, keys: new Map(), writing: 0 }
    this.segments.set(id, seg)
    this.active = seg
    return seg
  }

  private async writePlaced (p: Placed): Promise<void> {
    const seg = p.segment
    const made = seg.fd === undefined
    if (made) seg.fd = openSync(seg.path, 'wx+', 0o600)
    const fd = seg.fd as number
    await writeAll(fd, p.buffers, p.start)
    if (this.sync) {
      await fdatasyncAsync(fd)
      if (made) await this.syncDir()
    }
    // a failed write leaves its bytes past `size`: the next append writes over them
    if (p.end > seg.size) seg.size = p.end
    for (const [key, offset] of p.keys) seg.keys?.set(key, offset)
  }

  /** A new segment's name is durable only once its directory is synced. */
  private async syncDir (): Promise<void> {
    const fd = openSync(this.dir, 'r')
    try { await fsyncAsync(fd) } finally { closeSync(fd) }
  }

  /** A segment that no append may still reference: sealed, and no batch into it in progress. */
  collectable (seg: Segment): boolean { return seg !== this.active && seg.writing === 0 }

  read (value: Uint8Array, room = 0): Uint8Array {
    const { segment, offset, length, crc } = pointerOf(value)
    const seg = this.segments.get(segment)
    if (seg === undefined) throw new ValueGoneError(`value log segment ${segmentName(segment)} is gone: the entry was deleted`)
    seg.fd ??= openSync(seg.path, 'r')
    const out = Buffer.allocUnsafe(room + length)
    const n = readSync(seg.fd, out, room, length, offset)
    if (n !== length || crc32(out.subarray(room)) !== crc) {
      throw new StoreFaultError(`value log ${seg.path}: the value at offset ${offset} (${length} bytes) is damaged or missing`)
    }
    return out
  }

  /** Bytes in the log's segment files. */
  bytes (): number {
    let n = 0
    for (const seg of this.segments.values()) {
      try { n += statSync(seg.path).size } catch { /* not made yet, or deleted meanwhile */ }
    }
    return n
  }

  /** Close every segment file (reads after this reopen them). */
  close (): void {
    for (const seg of this.segments.values()) {
      if (seg.fd !== undefined) { try { closeSync(seg.fd) } catch { /* already closed */ } seg.fd = undefined }
    }
  }
}

/**
 * Write every byte of `buffers` at `position`. writev may write fewer bytes
 * than asked without an error (a disk filling up does that before it says
 * ENOSPC): the rest is written again, so a short write ends in the error and
 * never passes as a whole record a pointer could name.
 */
async function writeAll (fd: number, buffers: Uint8Array[], position: number): Promise<void> {
  let rest = buffers
  let at = position
  while (rest.length > 0) {
    const { bytesWritten: n } = await writevAsync(fd, rest, at)
    if (n === 0) throw new StoreFaultError('value log: a write made no progress')
    at += n
    rest = unwritten(rest, n)
  }
}

/** The buffers past the first `n` bytes of `buffers`. */
function unwritten (buffers: Uint8Array[], n: number): Uint8Array[] {
  let skip = n
  let k = 0
  while (k < buffers.length && skip >= buffers[k].byteLength) { skip -= buffers[k].byteLength; k++ }
  const out = buffers.slice(k)
  if (out.length > 0 && skip > 0) out[0] = out[0].subarray(skip)
  return out
}

/** A read of a separated value found its segment gone (the entry was deleted meanwhile). */
export function isValueGone (err: unknown): boolean {
  return err instanceof AmeshError && err.code === 'VALUE_GONE'
}
