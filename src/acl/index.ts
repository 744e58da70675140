// Public API of the ACL: lineage, capability tokens, chains, revocation,
// the access matrix and the decision. All pure; no I/O.
export {
  LineageMalformedError, LineageSignatureError, LineagePathError, DepthPolicyError,
  TokenMalformedError, TokenTooLargeError, TokenSignatureError,
  RevocationMalformedError, RevocationSignatureError,
  ProfileMalformedError, ProfileSignalError, ProfileZoneError
} from './errors.js'
export type { AclErrorClass } from './errors.js'
export {
  LINEAGE_DOMAIN, MAX_LINEAGE_BYTES, DEFAULT_MAX_DEPTH,
  issueLineage, encodeLineage, decodeLineage, verifyLineage, verifyLineagePath,
  ancestorsOf, speaksForFrom, checkDepthPolicy
} from './lineage.js'
export type { LineageCert, SignedLineage } from './lineage.js'
export {
  TOKEN_DOMAIN, MAX_TOKEN_BYTES, MSG_SEND_CMD,
  issueToken, encodeToken, decodeToken, tokenId, verifyToken, verifyTokenSignature, tokenSignatureChecks,
  isCommand, commandCovers
} from './token.js'
export type { Token, TokenPayload, TokenPolicy, TokenFields } from './token.js'
export { TokenCache, defaultTokenCache, DEFAULT_TOKEN_CACHE_SIZE } from './token-cache.js'
export { MAX_CHAIN_LINKS, TOKEN_REASONS, verifyChain, loadLink, chainExpiry, widening } from './chain.js'
export type { ChainContext, ChainLink, ChainResult, TokenReason } from './chain.js'
export {
  REVOCATION_DOMAIN, MAX_REVOCATION_BYTES,
  issueRevocation, encodeRevocation, decodeRevocation, verifyRevocation, revocationApplies, revokerCounts
} from './revocation.js'
export type { Revocation, SignedRevocation } from './revocation.js'
export { PROFILE_CODES, validateProfile, checkSendProfile, checkReceiveProfile } from './profile.js'
export type { Profile, NodeRef, AccessFacts, ProfileCode, ProfileDenial } from './profile.js'
export { decide, sameGroup, grantCommandFor } from './decide.js'
export { denialHint, narrowingHint } from './hints.js'
export type { HintFacts } from './hints.js'
export type { Decision, DecideInput, DenyCode, Party } from './decide.js'
