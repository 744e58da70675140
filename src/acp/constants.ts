// Names and bounds of the ACP bridge (src/acp), in readable units.
import { SECOND } from '../util/time.js'

/** The bridge's durable state under the node's agent dir: sessions per conversation, prompts in flight. */
export const JOURNAL_FILE = 'acp-journal.json'
/** A cancel packet: a MESSAGE whose context is this JSON (see docs/ACP.md). */
export const CANCEL_CONTEXT = '{"acp":"cancel"}'
/** Characters of a tool's input shown in the ESCALATE. */
export const PREVIEW_CHARS = 600
/** How long to wait for the agent's exit status after its connection broke. */
export const EXIT_GRACE = 2 * SECOND
/** Handled seqs kept in the journal above the ack cursor (bound). */
export const MAX_DONE = 10_000
/** A RETURN's result is cut at this many characters. */
export const MAX_RESULT_CHARS = 64 * 1024
