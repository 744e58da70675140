export const SECOND = 1000
export const MINUTE = 60 * SECOND
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR

/** packets per frame sent by a link */
export const FRAME_PACKETS = 256
/** frame payload budget in bytes before a frame is cut */
export const FRAME_BYTES = 1024 * 1024
/** frames in flight (sent, not yet acked) per link */
export const WINDOW_FRAMES = 8
/** no ack for this long while frames are in flight: the stream is dead */
export const ACK_TIMEOUT = 5 * SECOND
/** liveness ping of an open link while idle */
export const PING_INTERVAL = 5 * SECOND
export const PING_TIMEOUT = 3 * SECOND
/** reconnect backoff */
export const BACKOFF_MIN = 250
export const BACKOFF_MAX = 30 * SECOND
export const DIAL_TIMEOUT = 10 * SECOND
