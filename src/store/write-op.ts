// One write of a batch: what the Committer (db.ts) and the value log
// (value-log.ts) both take, kept apart so neither imports the other for it.

/**
 * `split`: the value's first `split` bytes are its header; with a value log
 * (value-log.ts), the bytes after them may be stored there instead.
 */
export interface PutOp { type: 'put', key: string, value: Uint8Array, split?: number }
export interface DelOp { type: 'del', key: string }
export type WriteOp = PutOp | DelOp
