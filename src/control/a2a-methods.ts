// The control methods of the A2A face (issue 13), spread into METHODS
// (methods.ts). The face (src/a2a) reaches the daemon only through these and
// the ordinary ones (send, inbox.follow, ack, card, node.list).
import { z } from 'zod'
import { SIGNALS } from '../packet/types.js'
import { defineError } from '../util/errors.js'

const name = z.string().min(1).max(256)
const id = z.string().min(1).max(256)
const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/)
const json = z.record(z.unknown())

const commitParams = z.object({
  node: name,
  task_id: id,
  packets: z.array(id).max(64).optional(),
  context: id.optional(),
  record: z.object({ owner: id, task: json }).strict().optional(),
  event: json.optional(),
  /** the task id was minted for this commit (a new task's random UUID): the host does not look for a stored record */
  fresh: z.boolean().optional()
}).strict()
type CommitParams = z.infer<typeof commitParams>

const COMMIT_KEYS = new Set(['node', 'task_id', 'packets', 'context', 'record', 'event', 'fresh'])
const isId = (v: unknown): v is string => typeof v === 'string' && v.length >= 1 && v.length <= 256
/** what z.record accepts, for params delivered as JSON: a plain object */
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype

/**
 * The commit's params when certainly valid (once per SendMessage, with a whole
 * task and event in it): what the schema gives, without its copies of the
 * task's and the event's members. Anything else is left to the schema.
 */
function fastCommit (raw: unknown): CommitParams | undefined {
  if (!isObject(raw) || Object.keys(raw).some((k) => !COMMIT_KEYS.has(k))) return undefined
  const { node, task_id: taskId, packets, context, record, event, fresh } = raw
  if (!isId(node) || !isId(taskId)) return undefined
  if (packets !== undefined && !(Array.isArray(packets) && packets.length <= 64 && packets.every(isId))) return undefined
  if (context !== undefined && !isId(context)) return undefined
  if (record !== undefined && !(isObject(record) && Object.keys(record).every((k) => k === 'owner' || k === 'task') && isId(record.owner) && isObject(record.task))) return undefined
  if ((event !== undefined && !isObject(event)) || (fresh !== undefined && typeof fresh !== 'boolean')) return undefined
  return raw as CommitParams
}

export const A2A_METHODS = {
  /** where the face listens and how the daemon sees it (config) */
  'a2a.info': { params: z.object({}).strict() },
  /** mint an A2A client identity NAME and a grant from `as` to it; answers the bearer secret once */
  'a2a.client.grant': {
    params: z.object({
      as: name,
      name,
      signals: z.array(z.enum(SIGNALS)).optional(),
      expires_ms: z.number().int().positive().optional()
    }).strict()
  },
  /** check a bearer (by its SHA-256) for calls to node `target`: the client it stands for, or a named refusal */
  'a2a.auth': { params: z.object({ credential: sha256Hex, target: name }).strict() },
  /** store a task (not when another caller owns its id; nothing is written when it is stored so already) */
  'a2a.task.put': {
    params: z.object({
      node: name,
      owner: id,
      task_id: id,
      task: json
    }).strict()
  },
  /**
   * in one durable batch, any of: packets (and the context) indexed to the task,
   * the task stored (as a2a.task.put), an event appended (as a2a.event.append)
   */
  'a2a.task.commit': { params: commitParams, fast: fastCommit },
  /** index packets the face sent or received for a task (and the task as its context's latest) */
  'a2a.task.link': { params: z.object({ node: name, task_id: id, packets: z.array(id).max(64), context: id.optional() }).strict() },
  'a2a.task.get': { params: z.object({ node: name, task_id: id }).strict() },
  'a2a.task.list': { params: z.object({ node: name, owner: id, limit: z.number().int().min(1).max(1000).optional() }).strict() },
  /** the task a packet id (sent by the face) or a context id belongs to */
  'a2a.task.find': { params: z.object({ packet: id.optional(), context: id.optional() }).strict() },
  /** append an event (a proto-JSON StreamResponse) to a task's durable history */
  'a2a.event.append': { params: z.object({ task_id: id, event: json }).strict() },
  'a2a.events': { params: z.object({ task_id: id, after: z.number().int().min(0), limit: z.number().int().min(1).max(10_000).optional() }).strict() }
} as const

export interface A2aInfo {
  /** host:port the face listens on, or null when it is off */
  listen: string | null
  /** the public base URL of the face (scheme, host, port) */
  base_url: string | null
  tls: boolean
  /** the A2A client nodes with a credential here (the face follows their inboxes) */
  clients: string[]
  /** why the face's setup is unsafe (a non-loopback address without TLS), or null */
  warning: string | null
  /** request body limit, bytes; rate limit per credential, requests per minute */
  body_limit: number
  rate_per_minute: number
}

export interface A2aTaskRow { owner: string, task: Record<string, unknown>, updated: number }
export interface A2aTaskRef { node: string, task: string }

export interface A2aMethodResults {
  'a2a.info': A2aInfo
  'a2a.client.grant': { name: string, node_id: string, token_id: string, reply_token_id: string, grantor: string, secret: string, expires: string }
  'a2a.auth': { name: string, node_id: string, token_id: string, grantor: string }
  /** held: the task stored now is the one given (false: another caller owns the id) */
  'a2a.task.put': { ok: true, held: boolean }
  'a2a.task.link': { ok: true }
  /** seq: the appended event's (null: none); stored: whether the task was written; held: whether the task stored now is the one given */
  'a2a.task.commit': { seq: number | null, stored: boolean, held: boolean }
  'a2a.task.get': A2aTaskRow | null
  'a2a.task.list': A2aTaskRow[]
  'a2a.task.find': A2aTaskRef | null
  'a2a.event.append': { seq: number }
  'a2a.events': Array<{ seq: number, event: unknown }>
}

// The refusals of `a2a.auth` (their codes reach the face, which answers 401/403/404).
export const A2aUnauthenticatedError = defineError('A2aUnauthenticatedError', 'A2A_UNAUTHENTICATED')
export const A2aCredentialExpiredError = defineError('A2aCredentialExpiredError', 'A2A_CREDENTIAL_EXPIRED')
export const A2aCredentialRevokedError = defineError('A2aCredentialRevokedError', 'A2A_CREDENTIAL_REVOKED')
export const A2aWrongAudienceError = defineError('A2aWrongAudienceError', 'A2A_WRONG_AUDIENCE')
/** the codes the face answers with HTTP 401 (the rest of the refusals: 403) */
export const A2A_401_CODES: readonly string[] = ['A2A_UNAUTHENTICATED', 'A2A_CREDENTIAL_EXPIRED', 'A2A_CREDENTIAL_REVOKED']
