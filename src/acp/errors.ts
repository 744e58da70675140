import { defineError } from '../util/errors.js'

/** The ACP agent could not be started or initialized (no stdio, ended early, another protocol version). */
export const AcpAgentError = defineError('AcpAgentError', 'ACP_AGENT')
