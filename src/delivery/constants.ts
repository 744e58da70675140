import { SECOND } from '../util/time.js'

/** packets per frame sent by a link */
export const FRAME_PACKETS = 256
/** frame payload budget in bytes before a frame is cut */
export const FRAME_BYTES = 1024 * 1024
/** frames in flight (sent, not yet acked) per link */
export const WINDOW_FRAMES = 8
/** no ack for this long while frames are in flight: check the peer with a ping */
export const ACK_TIMEOUT = 5 * SECOND
/** ...and if it answers pings but acks nothing for this many ACK_TIMEOUTs, drop the stream anyway */
export const ACK_STALLS = 4
/** liveness ping of an open link while idle */
export const PING_INTERVAL = 5 * SECOND
export const PING_TIMEOUT = 3 * SECOND
/** reconnect backoff: exponential from MIN to MAX, with jitter (50-100 %) */
export const BACKOFF_MIN = 250
export const BACKOFF_MAX = 5 * SECOND
export const DIAL_TIMEOUT = 10 * SECOND
/** frames a receiver holds (read, not yet acked) before it stops reading the stream */
export const RECEIVER_PENDING_FRAMES = 16
/** committed entries a link holds in memory for sending; past either bound it reads the store instead */
export const PENDING_ENTRIES = 4096
export const PENDING_BYTES = 8 * 1024 * 1024
