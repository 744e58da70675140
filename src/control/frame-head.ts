// The head of a binary frame on the control socket (the framing is described in
// follow-frames.ts). Its own module so the client's reply splitter, which every CLI
// command loads, does not load the packet decoder and dag-cbor that only a binary
// follow page's reader needs.
import { MAX_LINE_BYTES } from './protocol.js'

/** the first byte of a binary frame (a JSON reply line starts with '{') */
export const FRAME_MARK = 0x00
/** marker, request id, body length */
export const FRAME_HEAD = 9
/** the largest frame body a client accepts */
export const MAX_FRAME_BYTES = MAX_LINE_BYTES
