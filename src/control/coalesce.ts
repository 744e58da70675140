// Writes to a socket in the same turn of the event loop leave in one writev
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
 * any I/O.
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
