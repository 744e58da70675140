// Writes to a socket in the same turn of the event loop leave in one write
// instead of one syscall each: the daemon's replies (a durability batch
// completes hundreds of sends at once) and the client's requests (a burst of
// sends issued as replies arrive). Used by both ends of the control socket.
import type { Socket } from 'node:net'

/** sockets written to in this turn of the event loop */
const writtenThisTurn = new WeakSet<Socket>()

/**
 * Call before each write. The first write of a turn goes out at once (a lone
 * reply, event or request waits for nothing); later ones cork the socket, and
 * it is uncorked once the turn's callbacks and microtasks have run, before
 * any I/O. The reference of TurnWriter (test/control/coalesce.test.ts sends
 * the same writes through both).
 */
export function coalesce (socket: Socket): void {
  if (socket.writableCorked > 0) return
  if (!writtenThisTurn.has(socket)) {
    writtenThisTurn.add(socket)
    process.nextTick(endTurn, socket)
    return
  }
  socket.cork()
}

function endTurn (socket: Socket): void {
  writtenThisTurn.delete(socket)
  if (socket.writableCorked > 0) socket.uncork()
}

/**
 * The writes of one turn of the event loop to one socket: the first at once
 * (as coalesce), the others handed to it as one write once the turn's
 * callbacks and microtasks have run (before any I/O): their strings joined into one (and the Buffers a caller
 * hands over, concatenated), so the socket gets one chunk, not one per reply
 * or request (measured: ~0.45 µs per corked write of a 90-byte reply line
 * against ~0.15 joined, writer and reader in one process). The bytes and
 * their order are those of `socket.write` for each (coalesce above is the
 * reference). A Buffer that is only lent (its owner may reuse it once the
 * write returned: a pooled follow frame) is written at once, after what the
 * turn queued before it.
 */
export class TurnWriter {
  private parts: Array<string | Uint8Array> = []
  /** the socket's length units (string length, or bytes) of `parts` */
  private units = 0
  /** a flush is queued for the end of this turn */
  scheduled = false
  private strings = 0
  /** a write of the queue was answered false: room must be told (the socket's 'drain', or onRoom) */
  private owed = false

  /**
   * `onRoom`: called (on a later tick) when a write was answered false but
   * the socket took the turn's writes at once (a write the socket finishes
   * synchronously answers true and is followed by no 'drain'); the same as
   * the socket's 'drain' to whoever waits for it.
   */
  constructor (private readonly socket: Socket, private readonly onRoom?: () => void) {}

  /** The socket's unsent length with this turn's writes (its writableLength once they are handed over). */
  get length (): number { return this.socket.writableLength + this.units }

  /**
   * Queue `data` for the end of this turn (`adopt`: the caller hands the
   * Buffer over and never changes it; else a Buffer is written now). Returns
   * what `socket.write` answers for it when the turn's writes so far are
   * buffered: false once the socket's buffer reaches its high-water mark
   * ('drain' follows, as after a write that returned false).
   */
  write (data: string | Uint8Array, adopt = false): boolean {
    if (!this.scheduled) {
      // the first write of a turn leaves at once (a lone reply or request waits for nothing, and a
      // request made before synchronous work, a pager's next page, is read while that work runs)
      this.scheduled = true
      process.nextTick(flushTurn, this)
      return this.socket.write(data)
    }
    if (typeof data !== 'string' && !adopt) {
      this.flush()
      return this.socket.write(data)
    }
    this.parts.push(data)
    this.units += data.length
    if (typeof data === 'string') this.strings++
    const room = this.length < this.socket.writableHighWaterMark
    if (!room) this.owed = true
    return room
  }

  /** Hand the queued writes to the socket (a closed socket drops them, as its write would). */
  flush (): void {
    const parts = this.parts
    if (parts.length === 0) return
    const strings = this.strings
    this.parts = []
    this.units = 0
    this.strings = 0
    const owed = this.owed
    this.owed = false
    const socket = this.socket
    if (socket.destroyed) return
    // false from any write: the socket emits 'drain' once it has room
    const taken = this.hand(parts, strings)
    if (owed && taken && this.onRoom !== undefined) process.nextTick(this.onRoom)
  }

  private hand (parts: Array<string | Uint8Array>, strings: number): boolean {
    const socket = this.socket
    if (parts.length === 1) return socket.write(parts[0])
    if (strings === parts.length) return socket.write(parts.join(''))
    if (strings === 0) return socket.write(Buffer.concat(parts as Uint8Array[]))
    socket.cork()
    let taken = true
    let run: string[] = []
    for (const p of parts) {
      if (typeof p === 'string') { run.push(p); continue }
      if (run.length > 0) { taken = socket.write(run.join('')) && taken; run = [] }
      taken = socket.write(p) && taken
    }
    if (run.length > 0) taken = socket.write(run.join('')) && taken
    socket.uncork()
    return taken
  }
}

function flushTurn (w: TurnWriter): void { w.scheduled = false; w.flush() }
