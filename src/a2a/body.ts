// The JSON body of a JSON-RPC request, read as body-parser's json() reads it
// (the express chain's parser, with the same limit, types and strictness),
// without its per-request machinery for the plain case: a declared length
// within the limit, no content encoding, UTF-8, a body that starts with `{`.
// Anything else — chunked, compressed, another charset, over the limit, an
// empty body, leading whitespace or a BOM, an array — goes to body-parser
// itself (the bytes already read are handed to it as the request's stream),
// so every answer, error and error text stays body-parser's.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import express from 'express'

/** The media types read as JSON (the JSONRPC and HTTP+JSON bindings both). */
export const JSON_TYPES = ['application/json', 'application/a2a+json']
const OPEN_BRACE = 0x7b

/** body-parser's error shape for a body that is not JSON (status 400, type entity.parse.failed). */
function parseFailed (err: unknown): Error {
  const e = err instanceof Error ? err : new SyntaxError(String(err))
  return Object.assign(e, { status: 400, statusCode: 400, expose: true, type: 'entity.parse.failed' })
}

/** The declared length when the plain path may read the body; undefined: body-parser's case. */
function plainLength (req: IncomingMessage, limit: number): number | undefined {
  const h = req.headers
  if (h['transfer-encoding'] !== undefined) return undefined
  if (h['content-encoding'] !== undefined && h['content-encoding'].toLowerCase() !== 'identity') return undefined
  const [type, ...params] = (h['content-type'] ?? '').split(';').map((s) => s.trim().toLowerCase())
  if (!JSON_TYPES.includes(type)) return undefined
  if (params.some((p) => p !== 'charset=utf-8' && p !== 'charset="utf-8"')) return undefined
  const length = Number(h['content-length'])
  return Number.isSafeInteger(length) && length > 0 && length <= limit ? length : undefined
}

async function readAll (req: IncomingMessage): Promise<Buffer> {
  return await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.once('end', () => { resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)) })
    req.once('error', reject)
    req.once('aborted', () => { reject(Object.assign(new Error('request aborted'), { status: 400, type: 'request.aborted' })) })
  })
}

export class JsonBodyReader {
  private readonly parser: express.RequestHandler

  constructor (private readonly limit: number) {
    this.parser = express.json({ limit, type: JSON_TYPES, strict: true })
  }

  /** Read and parse the body into `req.body`; resolves with body-parser's error, or undefined. */
  async read (req: IncomingMessage, res: ServerResponse): Promise<unknown> {
    const length = plainLength(req, this.limit)
    if (length === undefined) return await this.viaBodyParser(req, req, res)
    let bytes: Buffer
    try {
      bytes = await readAll(req)
    } catch (err) {
      return err
    }
    if (bytes.length !== length || bytes[0] !== OPEN_BRACE) return await this.viaBodyParser(req, replayed(req, bytes), res)
    try {
      (req as { body?: unknown }).body = JSON.parse(bytes.toString('utf8'))
      return undefined
    } catch (err) {
      return parseFailed(err)
    }
  }

  private async viaBodyParser (req: IncomingMessage, from: IncomingMessage, res: ServerResponse): Promise<unknown> {
    const err = await new Promise<unknown>((resolve) => { this.parser(from as express.Request, res as express.Response, resolve) })
    if (from !== req) (req as { body?: unknown }).body = (from as { body?: unknown }).body
    return err
  }
}

/** The bytes read, as a request stream with the request's headers, for body-parser. */
function replayed (req: IncomingMessage, bytes: Buffer): IncomingMessage {
  const stream = Readable.from([bytes], { objectMode: false })
  return Object.assign(stream, { headers: req.headers }) as unknown as IncomingMessage
}
