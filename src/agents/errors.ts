// Named errors of managed nodes; codes are for the control socket and CLI.
import { defineError } from '../util/errors.js'

/** A spec file is invalid; the message names the field. */
export const SpecError = defineError('SpecError', 'INVALID_SPEC')
/** No managed node of that name on this host. */
export const UnknownAgentError = defineError('UnknownAgentError', 'UNKNOWN_AGENT')
/** The remote host refused to run a node for this caller (no or bad host grant). */
export const HostGrantError = defineError('HostGrantError', 'NO_HOST_GRANT')
/** Remote placement failed (unreachable host, protocol error, refusal). */
export const PlacementError = defineError('PlacementError', 'PLACEMENT_FAILED')
/** The name belongs to a node amesh does not manage (an external node). */
export const NotManagedError = defineError('NotManagedError', 'NOT_MANAGED')
