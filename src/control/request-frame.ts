// Binary request framing on the control socket, for `send` and `send.batch`:
// the texts travel as their UTF-8 bytes beside a small JSON head, so neither
// side escapes, scans or unescapes them as JSON (a 64 KiB text cost the client
// ~300 µs of JSON.stringify + Buffer.from, and the daemon its JSON.parse).
//   frame  0x00, u32 request id, u32 body length            (FRAME_HEAD, big-endian)
//   body   u32 head length, head: UTF-8 JSON {"method": M, "params": P}
//          u32 slot count n, n × u32 text length (0xffffffff: no text),
//          then the n texts' UTF-8 bytes, one after the other, to the body's end
// P is the call's params without any `text`: for `send` slot 0 is its `text`,
// for `send.batch` slot k is `sends[k].text`. The daemon puts each text back
// where it came from and handles the request exactly as the same request sent
// as one JSON line (decodeRequestFrame returns that line's parsed request).
// A client uses it only once the daemon said it reads it (`control.framing`).
// Its own module, light: the client (every CLI command) loads it.
import { isUtf8 } from 'node:buffer'
import { defineError } from '../util/errors.js'
import { FRAME_HEAD, FRAME_MARK } from './frame-head.js'
import { MAX_LINE_BYTES, type Request } from './protocol.js'

/** A binary request frame that cannot be read as a request (nothing is done for it). */
export const MalformedRequestFrameError = defineError('MalformedRequestFrameError', 'MALFORMED_REQUEST_FRAME')

/** The daemon's built-in method that names the request framings it reads. */
export const FRAMING_METHOD = 'control.framing'
/** What FRAMING_METHOD answers. */
export interface FramingResult { requests: Array<'ndjson' | 'binary'>, binary_methods: string[] }
/** the methods a binary request frame may carry */
export const BINARY_METHODS: readonly string[] = ['send', 'send.batch']
/** a slot without a text */
const NO_TEXT = 0xffffffff
/** the largest frame body (as for a request line) */
export const MAX_REQUEST_FRAME_BYTES = MAX_LINE_BYTES

/** A binary request as it arrived: its id and body (a view of the received bytes). */
export interface RequestFrame { id: number, body: Buffer }

type Fields = Record<string, unknown>
/** String#isWellFormed (Node 20; the ES2024 lib is not in this build's target) */
interface WellFormed { isWellFormed: () => boolean }

function isPlainObject (v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** A params object without its `text`, and the text (undefined: none); undefined when the text is not a well-formed string. */
function split (fields: Fields): [Fields, string | undefined] | undefined {
  const text = fields.text
  if (text === undefined) return [fields, undefined]
  // a lone surrogate has no UTF-8: such a text goes as JSON (which keeps it)
  if (typeof text !== 'string' || !(text as unknown as WellFormed).isWellFormed()) return undefined
  const { text: _, ...rest } = fields
  return [rest, text]
}

/** The head params and texts of a call, or undefined when it goes as a JSON line. */
function slotsOf (method: string, params: unknown): { head: unknown, texts: Array<string | undefined> } | undefined {
  if (!isPlainObject(params)) return undefined
  if (method === 'send') {
    const s = split(params)
    return s === undefined ? undefined : { head: s[0], texts: [s[1]] }
  }
  if (method !== 'send.batch' || !Array.isArray(params.sends) || Object.keys(params).length !== 1) return undefined
  const sends: unknown[] = []
  const texts: Array<string | undefined> = []
  for (const entry of params.sends as unknown[]) {
    const s = isPlainObject(entry) ? split(entry) : undefined
    if (s === undefined) return undefined
    sends.push(s[0])
    texts.push(s[1])
  }
  return { head: { sends }, texts }
}

/**
 * The binary frame of a request, or undefined when it goes as a JSON line:
 * a method other than BINARY_METHODS, params the daemon's check will refuse
 * anyway (its JSON line words the error), a text that is not well-formed
 * UTF-16, or a body over the bound.
 */
export function encodeRequestFrame (id: number, method: string, params: unknown): Buffer | undefined {
  const slots = slotsOf(method, params)
  if (slots === undefined) return undefined
  const head = JSON.stringify({ method, params: slots.head })
  const headBytes = Buffer.byteLength(head)
  const n = slots.texts.length
  const lengths = new Array<number>(n)
  let body = 8 + headBytes + 4 * n
  for (let k = 0; k < n; k++) {
    const t = slots.texts[k]
    lengths[k] = t === undefined ? NO_TEXT : Buffer.byteLength(t)
    if (t !== undefined) body += lengths[k]
  }
  if (body > MAX_REQUEST_FRAME_BYTES) return undefined
  const out = Buffer.allocUnsafe(FRAME_HEAD + body)
  out[0] = FRAME_MARK
  out.writeUInt32BE(id, 1)
  out.writeUInt32BE(body, 5)
  let at = FRAME_HEAD
  out.writeUInt32BE(headBytes, at)
  at += 4 + out.write(head, at + 4)
  out.writeUInt32BE(n, at)
  at += 4
  for (let k = 0; k < n; k++) { out.writeUInt32BE(lengths[k], at); at += 4 }
  for (const t of slots.texts) if (t !== undefined) at += out.write(t, at)
  return out
}

function bad (why: string): Error {
  return new MalformedRequestFrameError(`malformed binary request frame: ${why}`)
}

/** The texts of a body's slots (undefined: none), checked as UTF-8. */
function readTexts (body: Buffer, at: number): Array<string | undefined> {
  if (body.length - at < 4) throw bad('no slot count')
  const n = body.readUInt32BE(at)
  at += 4
  if (n > (body.length - at) / 4) throw bad(`${n} slots do not fit the body`)
  let text = at + 4 * n
  const texts = new Array<string | undefined>(n)
  for (let k = 0; k < n; k++) {
    const len = body.readUInt32BE(at + 4 * k)
    if (len === NO_TEXT) continue
    if (len > body.length - text) throw bad(`text ${k} runs past the body`)
    // bytes that are not UTF-8 decode with U+FFFD in them; only then is the check needed
    // (a one-byte string, any ASCII text, answers the search at once)
    const t = body.toString('utf8', text, text + len)
    if (t.indexOf('\ufffd') !== -1 && !isUtf8(body.subarray(text, text + len))) throw bad(`text ${k} is not UTF-8`)
    texts[k] = t
    text += len
  }
  if (text !== body.length) throw bad(`${body.length - text} bytes after the last text`)
  return texts
}

/** Put slot k's text into fields (which must not hold a text of their own). */
function fill (fields: unknown, text: string | undefined, where: string): void {
  if (!isPlainObject(fields)) throw bad(`${where} is not an object`)
  if (fields.text !== undefined) throw bad(`${where} holds a text in the head (texts travel in the slots)`)
  if (text !== undefined) fields.text = text
}

/**
 * The request a binary frame carries: what the same request sent as one JSON
 * line parses to. Throws MalformedRequestFrameError when the frame is not one.
 */
export function decodeRequestFrame (frame: RequestFrame): Request {
  const body = frame.body
  if (body.length < 4) throw bad('no head')
  const headBytes = body.readUInt32BE(0)
  if (headBytes > body.length - 4) throw bad('the head runs past the body')
  let head: unknown
  try { head = JSON.parse(body.toString('utf8', 4, 4 + headBytes)) } catch { throw bad('the head is not JSON') }
  if (!isPlainObject(head) || typeof head.method !== 'string') throw bad('the head needs a method')
  const method = head.method
  if (!BINARY_METHODS.includes(method)) throw bad(`binary framing carries ${BINARY_METHODS.join(' and ')} only, not ${method}`)
  const texts = readTexts(body, 4 + headBytes)
  const params = head.params
  if (method === 'send') {
    if (texts.length !== 1) throw bad(`send takes 1 slot, got ${texts.length}`)
    fill(params, texts[0], 'params')
  } else {
    const sends = isPlainObject(params) ? params.sends : undefined
    if (!Array.isArray(sends)) throw bad('send.batch params need sends')
    if (texts.length !== sends.length) throw bad(`${sends.length} sends but ${texts.length} slots`)
    for (let k = 0; k < sends.length; k++) fill(sends[k], texts[k], `sends[${k}]`)
  }
  return { id: frame.id, method, params }
}
