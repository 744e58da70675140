// The packet's fields, their types and bounds, declared once.
//
// The envelope (id, from, to, signal, scope, payload, ts) and the proof have
// their own shapes and are handled by name. Every other top-level field is a
// scalar declared in FIELDS below, and everything else is driven from it:
// - the Packet type (types.ts: OptionalFields),
// - the validator (validate.ts) and its error wording,
// - the direct decoder (decode-fast.ts: its key table and readers),
// - the encoder (codec.ts / canonical.ts: keys are written sorted, whatever they are),
// - the rendered JSON (render.ts and the byte renderer render-json.ts),
// - the `send` control parameters (src/control/send-params.ts: the zod schema
//   and the hand-written check) and the packet `send` builds (copySendFields).
//
// Adding a packet field takes three edits:
//   1. its entry in FIELDS here (position = its place in the validated packet
//      and in the rendered JSON; `send: true` makes it a `send` parameter);
//   2. the CLI flag in src/cli/commands/send.ts;
//   3. the MCP tool argument in src/mcp/tools.ts (and, if the channel should
//      show it, src/mcp/render.ts metaOf).
// A field of a new kind (not string / nodeId / enum / bool) also needs its
// reader in validate.ts and decode-fast.ts and its check in send-params.ts.

export const SIGNALS = ['SPAWN', 'RETURN', 'BLOCKED_ON', 'CHECKPOINT', 'HANDOFF', 'ESCALATE', 'ERROR', 'MESSAGE'] as const
export const ZONES = ['kernel', 'project', 'personal'] as const
export const PRIORITIES = ['low', 'normal', 'high'] as const
export const PAYLOAD_FIELDS = ['text', 'context', 'decision', 'options', 'result'] as const

export const MAX_TEXT_FIELD = 256 * 1024
export const MAX_FILES = 1000
export const MAX_OPTIONS = 100
export const MAX_ID_FIELD = 256
export const MAX_PROOF_ITEMS = 16
/** deepest nesting of arrays and objects in a payload JSON value (context, decision, result) */
export const MAX_JSON_DEPTH = 32
/**
 * The packet schema version this code writes and reads (docs/PROTOCOL.md):
 * 2 = payload context/decision/result as JSON values, options as strings or
 * {id, label, description?}, the broadcast fields. Schema-1 packets (string
 * payload fields) are schema-2 packets too, so they decode unchanged.
 */
export const PACKET_SCHEMA = 2
/** longest scope file and longest option (characters) */
export const MAX_LIST_STRING = 4096

/** What one optional scalar field holds. */
export type FieldSpec =
  /** a string of 1..MAX_ID_FIELD characters */
  | { readonly kind: 'string', readonly send: boolean, readonly render: boolean }
  /** a node id (did:key) */
  | { readonly kind: 'nodeId', readonly send: boolean, readonly render: boolean }
  /** one of `values` */
  | { readonly kind: 'enum', readonly values: readonly string[], readonly send: boolean, readonly render: boolean }
  | { readonly kind: 'bool', readonly send: boolean, readonly render: boolean }

/**
 * The optional scalar fields, in the order the validated packet and the
 * rendered JSON have them. `send`: a `send` parameter of the same name, copied
 * into the packet. `render`: copied as it is into the rendered JSON (the
 * carried names are rendered through from/to instead).
 */
export const FIELDS = {
  /** the sender's node name, informational (authority comes from `from`) */
  from_name: { kind: 'string', send: false, render: false },
  /** the target's node name as the sender resolved it, informational */
  to_name: { kind: 'string', send: false, render: false },
  return_to: { kind: 'nodeId', send: true, render: true },
  session_id: { kind: 'string', send: true, render: true },
  conversation_id: { kind: 'string', send: true, render: true },
  in_reply_to: { kind: 'string', send: true, render: true },
  priority: { kind: 'enum', values: PRIORITIES, send: true, render: true },
  requires_reply: { kind: 'bool', send: true, render: true },
  /** the sender wants no receipts for it: the receiving host reports no pushed/read (receipt-service.ts) */
  no_receipt: { kind: 'bool', send: true, render: false },
  /** set on each member's copy of a broadcast: the broadcast id (one per call, shared by the copies) */
  broadcast: { kind: 'string', send: false, render: true },
  /** with broadcast: the head of the group broadcast to */
  group_id: { kind: 'nodeId', send: false, render: true }
} as const satisfies Record<string, FieldSpec>

export type FieldName = keyof typeof FIELDS

type ValueOf<S> = S extends { kind: 'bool' } ? boolean
  : S extends { kind: 'enum', values: ReadonlyArray<infer V> } ? V
    : string

/** The value type of each optional field. */
export type FieldValues = { -readonly [K in FieldName]: ValueOf<typeof FIELDS[K]> }
/** The optional fields as a packet has them. */
export type OptionalFields = Partial<FieldValues>

/** FIELDS' names, in its order */
export const FIELD_NAMES = Object.keys(FIELDS) as readonly FieldName[]

type FlaggedNames<Flag extends 'send' | 'render'> = { [K in FieldName]: typeof FIELDS[K][Flag] extends true ? K : never }[FieldName]
export type SendFieldName = FlaggedNames<'send'>
export type RenderedFieldName = FlaggedNames<'render'>

/** the fields that are `send` parameters, in FIELDS' order */
export const SEND_FIELDS = FIELD_NAMES.filter((k) => FIELDS[k].send) as readonly SendFieldName[]
/** the fields the rendered JSON copies, in FIELDS' order */
export const RENDERED_FIELDS = FIELD_NAMES.filter((k) => FIELDS[k].render) as readonly RenderedFieldName[]

/** The envelope keys (hand-written shapes), then the proof: with FIELDS, every key a packet may have. */
export const ENVELOPE_KEYS = ['id', 'from', 'to', 'signal', 'scope', 'payload', 'ts'] as const
export const PACKET_KEYS: readonly string[] = [...ENVELOPE_KEYS, ...FIELD_NAMES, 'proof']

/** Copy the `send` fields that `source` sets onto `packet`, in FIELDS' order. */
export function copySendFields (source: Partial<Record<SendFieldName, unknown>>, packet: OptionalFields): void {
  const out = packet as Record<string, unknown>
  for (const k of SEND_FIELDS) {
    const v = source[k]
    if (v !== undefined) out[k] = v
  }
}
