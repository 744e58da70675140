// Named errors of the ACL module: one class per condition, `name` set.
// Callers test `err.name`; `code` is for errors that leave the process.
import { defineError, type AmeshErrorClass } from '../util/errors.js'

export type AclErrorClass = AmeshErrorClass

const defineAclError = defineError

/** A lineage certificate is not valid DAG-CBOR of the expected shape (or too large). */
export const LineageMalformedError = defineAclError('LineageMalformedError', 'LINEAGE_MALFORMED')
/** A lineage certificate's signature does not verify against the claimed parent. */
export const LineageSignatureError = defineAclError('LineageSignatureError', 'LINEAGE_SIGNATURE')
/** A list of lineage certificates does not form a path from a node up to a root. */
export const LineagePathError = defineAclError('LineagePathError', 'LINEAGE_PATH')
/** Starting a child would exceed the configured `policy.max_depth`. */
export const DepthPolicyError = defineAclError('DepthPolicyError', 'DEPTH_POLICY')

/** A capability token is not valid DAG-CBOR of the expected shape. */
export const TokenMalformedError = defineAclError('TokenMalformedError', 'TOKEN_MALFORMED')
/** A capability token exceeds the size bound. */
export const TokenTooLargeError = defineAclError('TokenTooLargeError', 'TOKEN_TOO_LARGE')
/** A capability token's signature does not verify against its issuer. */
export const TokenSignatureError = defineAclError('TokenSignatureError', 'TOKEN_SIGNATURE')

/** A revocation statement is not valid DAG-CBOR of the expected shape. */
export const RevocationMalformedError = defineAclError('RevocationMalformedError', 'REVOCATION_MALFORMED')
/** A revocation statement's signature does not verify against the named revoker. */
export const RevocationSignatureError = defineAclError('RevocationSignatureError', 'REVOCATION_SIGNATURE')

/** A profile is not an object of the expected shape. */
export const ProfileMalformedError = defineAclError('ProfileMalformedError', 'PROFILE_MALFORMED')
/** A profile names a signal that does not exist. */
export const ProfileSignalError = defineAclError('ProfileSignalError', 'PROFILE_UNKNOWN_SIGNAL')
/** A profile names a zone that does not exist. */
export const ProfileZoneError = defineAclError('ProfileZoneError', 'PROFILE_UNKNOWN_ZONE')
