// A2A face tests: a real host with the face on, the official @a2a-js/sdk client
// with a bearer credential from `amesh grant --to-a2a`.
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client'
import { startHost, waitFor, type TestHost } from '../utils/hosts.js'

export interface FaceHost extends TestHost {
  /** http://127.0.0.1:PORT */
  base: string
}

export async function startFaceHost (config: Record<string, unknown> = {}): Promise<FaceHost> {
  const h = await startHost({ config: { a2a: { listen: '127.0.0.1:0' }, ...config } })
  const base = await faceBase(h)
  return Object.assign(h, { base })
}

/** The face's base URL once it listens (it starts just after the control socket). */
export async function faceBase (h: TestHost, timeout = 20_000): Promise<string> {
  return await waitFor(async () => {
    const c = await h.client()
    try {
      return (await c.call('a2a.info')).base_url ?? undefined
    } finally { c.close() }
  }, timeout, 'the A2A face to listen')
}

export interface Credential { name: string, node_id: string, token_id: string, secret: string }

export async function grantA2a (h: TestHost, as: string, name: string, extra: string[] = []): Promise<Credential> {
  return JSON.parse(await h.ok(['grant', '--as', as, '--to-a2a', name, '--json', ...extra])) as Credential
}

export function bearerFetch (secret: string): typeof fetch {
  return async (input, init) => {
    const headers = new Headers(init?.headers)
    headers.set('Authorization', `Bearer ${secret}`)
    return await fetch(input, { ...init, headers })
  }
}

export async function sdkClient (base: string, node: string, secret: string, binding: 'JSONRPC' | 'HTTP+JSON'): Promise<Client> {
  const fetchImpl = bearerFetch(secret)
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
    preferredTransports: [binding]
  }))
  return await factory.createFromUrl(`${base}/nodes/${node}/`)
}

export interface InboxPacket { seq: number, id: string, from: string, signal: string, payload: Record<string, unknown>, conversation_id?: string, in_reply_to?: string }

export async function inbox (h: TestHost, node: string): Promise<InboxPacket[]> {
  const out = await h.ok(['inbox', node, '--json'])
  return out.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as InboxPacket)
}

export async function waitInbox (h: TestHost, node: string, n: number): Promise<InboxPacket[]> {
  return await waitFor(async () => { const p = await inbox(h, node); return p.length >= n ? p : undefined }, 30_000, `${n} packets in ${node}'s inbox`)
}

export function textMessage (text: string, extra: Record<string, unknown> = {}) {
  return { messageId: `m-${Math.random().toString(36).slice(2)}`, role: 1, parts: [{ content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], contextId: '', taskId: '', metadata: undefined, extensions: [], referenceTaskIds: [], ...extra }
}
