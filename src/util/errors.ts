// One error class per condition, with `name` set. Codes are only attached
// where an error leaves the process (control replies, CLI, MCP results).

export class AmeshError extends Error {
  readonly code: string
  constructor (code: string, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'AmeshError'
    this.code = code
  }
}

export type AmeshErrorClass = new (message: string, options?: { cause?: unknown }) => AmeshError

/** A named error class with a stable code: `name` for callers, `code` for what leaves the process. */
export function defineError (name: string, code: string): AmeshErrorClass {
  const Cls = class extends AmeshError {
    constructor (message: string, options?: { cause?: unknown }) {
      super(code, message, options)
      this.name = name
    }
  }
  Object.defineProperty(Cls, 'name', { value: name })
  return Cls
}

export const InvalidPacketError = defineError('InvalidPacketError', 'INVALID_PACKET')
export const PacketTooLargeError = defineError('PacketTooLargeError', 'PACKET_TOO_LARGE')
/** A payload JSON value nests deeper than the packet bound (MAX_JSON_DEPTH). */
export const PayloadTooDeepError = defineError('PayloadTooDeepError', 'PAYLOAD_TOO_DEEP')
export const SignalPayloadError = defineError('SignalPayloadError', 'SIGNAL_PAYLOAD')
export const UnknownSignalError = defineError('UnknownSignalError', 'UNKNOWN_SIGNAL')
export const MalformedFrameError = defineError('MalformedFrameError', 'MALFORMED_FRAME')
export const UnknownNodeError = defineError('UnknownNodeError', 'UNKNOWN_NODE')
export const NameCollisionError = defineError('NameCollisionError', 'NAME_COLLISION')
export const InvalidArgumentError = defineError('InvalidArgumentError', 'INVALID_ARGUMENT')
export const UnknownMethodError = defineError('UnknownMethodError', 'UNKNOWN_METHOD')
export const StoreLockedError = defineError('StoreLockedError', 'STORE_LOCKED')
export const DaemonNotRunningError = defineError('DaemonNotRunningError', 'DAEMON_NOT_RUNNING')
export const OutboxFullError = defineError('OutboxFullError', 'OUTBOX_FULL')
export const InboxFullError = defineError('InboxFullError', 'INBOX_FULL')
export const NotServedHereError = defineError('NotServedHereError', 'NOT_SERVED_HERE')
export const ChannelBindingError = defineError('ChannelBindingError', 'CHANNEL_BINDING')
export const InvalidSignatureError = defineError('InvalidSignatureError', 'INVALID_SIGNATURE')
export const AccessDeniedError = defineError('AccessDeniedError', 'ACCESS_DENIED')
/** `send.batch`: more sends or more text than one call may carry; nothing was sent. */
export const BatchTooLargeError = defineError('BatchTooLargeError', 'BATCH_TOO_LARGE')
export const ConfigError = defineError('ConfigError', 'CONFIG')
/** The store's disk is full or under the low-space watermark: nothing is written; retry once space returns. */
export const StoreFullError = defineError('StoreFullError', 'STORE_FULL')
/** A store write failed (I/O error): nothing more is acknowledged until the store is reopened; retry later. */
export const StoreFaultError = defineError('StoreFaultError', 'STORE_FAULT')
/** `join`: the address is not a multiaddr amesh can dial. */
export const InvalidAddressError = defineError('InvalidAddressError', 'INVALID_ADDRESS')
/** `join`: the address could not be reached. */
export const UnreachableError = defineError('UnreachableError', 'UNREACHABLE')

/** The stable code of an error that leaves the process. */
export function errorCode (err: unknown): string {
  return err instanceof AmeshError ? err.code : 'INTERNAL'
}

export function errorMessage (err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
