// Bounds and names of the A2A face (docs/A2A.md).
import { SECOND } from '../util/time.js'

/** The amesh node extension URI (the signed card requires it; the face does not enforce it on A2A callers). */
export const NODE_EXTENSION_URI = 'https://amesh.dev/extensions/node/v1'
/** amesh's SSE resume extension: event ids and Last-Event-ID replay on SubscribeToTask. */
export const RESUME_EXTENSION_URI = 'https://amesh.dev/extensions/a2a-resume/v1'
/** Where the face keeps its own data in task/status metadata. */
export const META_KEY = 'amesh'
/** The largest packet text field (src/packet/fields.ts MAX_TEXT_FIELD): an A2A message's parts must fit. */
export const MAX_PACKET_TEXT = 256 * 1024
/** An SSE subscriber that lets this much output pile up unread is disconnected. */
export const SSE_MAX_BUFFERED = 4 * 1024 * 1024
/** Events read per page when replaying a task's history. */
export const REPLAY_PAGE = 1000
/** Rate limit window. */
export const RATE_WINDOW = 60 * SECOND
