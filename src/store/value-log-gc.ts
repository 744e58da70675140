// Deleting value-log segments no key points into any more. A record is live
// while its key's value in LevelDB is a pointer to it; keys are deleted (an
// outbox entry acked, an inbox entry pruned) without the log hearing of it,
// so a sealed segment's keys are looked up, and the segment goes once none
// of them points into it. A pointer is only ever written to the active
// segment, so a key found not pointing here never will again: each check
// looks up only the keys still live at the one before.
import { closeSync, openSync, readSync, unlinkSync } from 'node:fs'
import { crc32 } from 'node:zlib'
import { errorMessage } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import { SECOND } from '../util/time.js'
import { RECORD_HEAD, isSeparated, pointerOf, type Segment, type ValueLog } from './value-log.js'

/** keys looked up per getMany */
const LOOKUP_CHUNK = 4096
/** a segment still holding live records is checked again after this, doubling while none of them goes, up to MAX */
const RECHECK_MIN = SECOND
const RECHECK_MAX = 640 * SECOND
/** how often the collector looks for segments due a check */
const TICK = SECOND
/** bytes read per record head when reading an earlier run's segment: the head and a key of up to this much */
const HEAD_READ = RECORD_HEAD + 1024

export interface LookupDb { getMany: (keys: string[]) => Promise<Array<Uint8Array | undefined>> }

/**
 * The keys of a segment's records and where their values start, read from
 * its file: records up to the first whose head is torn or whose value runs
 * past the end (a crash's tail, which no pointer names).
 */
export function readSegmentKeys (path: string): Map<string, number> {
  const keys = new Map<string, number>()
  const fd = openSync(path, 'r')
  try {
    const head = Buffer.allocUnsafe(HEAD_READ)
    for (let at = 0; ;) {
      const n = readSync(fd, head, 0, HEAD_READ, at)
      if (n < RECORD_HEAD) break
      const length = head.readUInt32BE(4)
      const keyLen = head.readUInt16BE(12)
      if (RECORD_HEAD + keyLen > n || crc32(head.subarray(4, RECORD_HEAD + keyLen)) !== head.readUInt32BE(0)) break
      const offset = at + RECORD_HEAD + keyLen
      const probe = Buffer.allocUnsafe(1)
      if (length > 0 && readSync(fd, probe, 0, 1, offset + length - 1) !== 1) break
      keys.set(head.toString('utf8', RECORD_HEAD, RECORD_HEAD + keyLen), offset)
      at = offset + length
    }
  } finally {
    closeSync(fd)
  }
  return keys
}

interface Due { at: number, wait: number }

export class ValueLogCollector {
  private readonly due = new Map<number, Due>()
  private running = false
  private timer?: NodeJS.Timeout
  private stopped = false

  constructor (private readonly log: ValueLog, private readonly db: LookupDb, private readonly logger: Logger) {}

  start (): void {
    this.log.onSealed = () => { setImmediate(() => { void this.collect() }) }
    this.timer = setInterval(() => { void this.collect() }, TICK)
    this.timer.unref()
    setImmediate(() => { void this.collect() })
  }

  stop (): void {
    this.stopped = true
    this.log.onSealed = undefined
    clearInterval(this.timer)
  }

  /** Check now every collectable segment due a check, or every one with `all`; returns how many were deleted. */
  async collect (all = false): Promise<number> {
    if (this.running || this.stopped) return 0
    this.running = true
    let deleted = 0
    try {
      const now = Date.now()
      const sealed = this.log.sealedSince
      this.log.sealedSince = false
      for (const seg of [...this.log.segments.values()]) {
        if (!this.log.collectable(seg)) continue
        const due = this.due.get(seg.id)
        if (!all && !sealed && due !== undefined && due.at > now) continue
        if (await this.check(seg, due)) deleted++
      }
    } catch (err) {
      this.logger(`value log: collecting segments failed (tried again later): ${errorMessage(err)}`)
    } finally {
      this.running = false
    }
    return deleted
  }

  /** Look up the segment's live keys; delete it when none points into it. */
  private async check (seg: Segment, due: Due | undefined): Promise<boolean> {
    seg.keys ??= readSegmentKeys(seg.path)
    const keys = [...seg.keys.keys()]
    let gone = 0
    for (let k = 0; k < keys.length; k += LOOKUP_CHUNK) {
      const chunk = keys.slice(k, k + LOOKUP_CHUNK)
      const values = await this.db.getMany(chunk)
      values.forEach((v, j) => {
        const offset = seg.keys?.get(chunk[j])
        if (v === undefined || !isSeparated(v) || pointerOf(v).segment !== seg.id || pointerOf(v).offset !== offset) { seg.keys?.delete(chunk[j]); gone++ }
      })
    }
    if (seg.keys.size > 0 || this.stopped || !this.log.collectable(seg)) {
      const wait = gone > 0 || due === undefined ? RECHECK_MIN : Math.min(RECHECK_MAX, due.wait * 2)
      this.due.set(seg.id, { at: Date.now() + wait, wait })
      return false
    }
    this.log.segments.delete(seg.id)
    this.due.delete(seg.id)
    if (seg.fd !== undefined) closeSync(seg.fd)
    seg.fd = undefined
    try { unlinkSync(seg.path) } catch (err) { if ((err as { code?: string }).code !== 'ENOENT') throw err }
    return true
  }
}
