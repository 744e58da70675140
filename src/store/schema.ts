// The one list of namespaces in a host's LevelDB store (keys are utf8
// strings, values bytes). Every key the host writes starts with one of these
// prefixes; each record type is read and written only through its repository
// in src/store/ (named beside its entry). Key layouts and value encodings are
// part of the on-disk format: an existing store must open unchanged, so an
// entry is never renamed or reused. A prefix that is no longer written is
// kept here as a comment (with what it held and when it was retired), so
// that it is not given to a new record type while old stores may hold it.
//
// `!` separates the parts of a key; ids (did:key, ULID, peer ids, multiaddrs)
// contain no `!`, and numbers are fixed-width lowercase hex, so key order is
// numeric order.

export const Bucket = {
  /**
   * n!<node id> → JSON NodeRecord (name, kind, PKCS#8 key base64, lineage…).
   * The nodes served by this host. Repository: nodes.ts (NodeStore).
   */
  node: 'n!',
  /**
   * i!<node id>!<seq: 12 hex> → [0x01][received ms: float64 BE][packet bytes];
   * older entries are a CBOR map {r: received, p: packet} (first byte 0xa2),
   * still read. A packet of 8 KiB and more: [0x02][received ms][value-log
   * pointer, 18 bytes], its bytes in <store>/values/ (value-log.ts). A node's
   * inbox, gap-free seqs from 1. Repository: inbox.ts.
   */
  inbox: 'i!',
  /** c!<node id> → JSON number: the node's acked inbox cursor. Repository: inbox.ts. */
  cursor: 'c!',
  /**
   * i~<packet id (ULID)> → JSON {"nodeId":…,"seq":N}: where a received
   * message id is stored, for duplicate detection within the dedup window
   * (ULID order is time order, so retention deletes a key range) and lookup by
   * id. Repository: inbox-dedup.ts (DedupRecords, for InboxStore.locate, entryById).
   * The prefix sorts right after every inbox key (`~` > `!`) and before `j!`:
   * a packet's id and its entry are written in one batch, so a LevelDB table
   * holding both spans only new inbox keys and ids, never the older (large)
   * inbox values. Under `d!`, before `i!`, every such table spanned the whole
   * inbox and each compaction rewrote all of it (docs/PERFORMANCE.md, session 15).
   */
  dedup: 'i~',
  /**
   * d!<packet id (ULID)> → the same as `i~`, written by amesh before session
   * 15: still read (duplicate checks, locate) and pruned with the dedup
   * window, never written. A store upgraded from that version holds none once
   * the dedup window has passed. Repository: inbox-dedup.ts.
   */
  dedupBefore: 'd!',
  /**
   * o!<destination peer id>!<enqueue seq: 16 hex> → [0x01][exp ms: float64 BE]
   * [id len: u8][to len: u8][from len: u8][id][to][from][packet bytes]; older
   * entries are a CBOR map {i, to, from, exp, p}. Packets queued for a remote
   * host, in commit order. A packet of 8 KiB and more: first byte 0x02 and
   * the value-log pointer in place of the packet bytes (value-log.ts).
   * Repository: outbox.ts.
   */
  outbox: 'o!',
  /**
   * e!<exp ms: 12 hex>!<outbox key> → empty: expiry index of the outbox, its
   * records written late (an entry settled soon never gets one; load() writes
   * those a crash left unwritten). Repository: outbox.ts, outbox-expiry.ts.
   */
  expiry: 'e!',
  /** x!<dead-at ms: 12 hex>!<packet id> → CBOR DeadLetter: packets that could not be delivered. Repository: outbox.ts. */
  dead: 'x!',
  /**
   * g!h!<audience node id>!<subject node id>!<token id> → CBOR array of the
   * encoded tokens, root first: grant chains held by this host's nodes.
   * Repository: acl-records.ts.
   */
  heldGrant: 'g!h!',
  /** g!i!<token id> → CBOR array of the encoded tokens, root first: chains this host's nodes issued. Repository: acl-records.ts. */
  issuedGrant: 'g!i!',
  /** r!<token id>!<revoker node id> → the signed revocation bytes as received (append-only). Repository: acl-records.ts. */
  revocation: 'r!',
  /** b!<node id>!<sender node id> → [0x01]: the node blocks the sender. Repository: acl-records.ts. */
  block: 'b!',
  /** p!<multiaddr> → utf8 decimal ms when it was added: peers joined with `amesh join` / `--peer`. Repository: peers.ts. */
  peer: 'p!',
  /** k!<node id> → JSON signed agent card: verified cards of nodes on other hosts. Repository: cards.ts. */
  card: 'k!',
  /** j!<destination>:<port>:<remote home> → JSON ssh join spec: supervised ssh tunnels. Repository: ssh-joins.ts. */
  sshJoin: 'j!',
  /**
   * v!<node id>!<seq: 12 hex> → JSON {at, by}: a message above the node's
   * cursor that was read out of order (a reply, an ack by id); folded into the
   * cursor and deleted once every seq before it is read. Repository: consumption.ts.
   */
  readMark: 'v!',
  /** w!<node id>!<seq: 12 hex> → JSON {att, at, n}: the last channel push of a message (attachment, when, how many pushes). Repository: consumption.ts. */
  pushMark: 'w!',
  /** a!<node id> → JSON {last_read?, last_attach?}: when a session of the node last read and attached. Repository: consumption.ts. */
  presence: 'a!',
  /** h!<packet id>!<state> → {at, reason?, m?} (binary format 1, receipt-values.ts; the earlier JSON still read): one state a message this host sent reached (m: to/from/dest on the sender's own records). Repository: receipts.ts. */
  receipt: 'h!',
  /** y!<sender host peer id>!<packet id>!<state> → CBOR signed receipt: receipts waiting to reach their sender. Repository: receipts.ts. */
  receiptOut: 'y!',
  /** z!<largest packet id>!<smallest packet id> → binary format 2 (receipt-batches.ts): the delivered records of the messages of one ack batch (those acked within 10 s of their send; others keep h!<id>!delivered). Repository: receipts.ts. */
  receiptBatch: 'z!',
  /**
   * u!<a2a node id>!<task id> → JSON OpenA2aTask: a task an external A2A agent
   * opened for a message sent to it, until its final answer is in the
   * sender's inbox (followed again after a restart). Repository: a2a-tasks.ts.
   */
  a2aAgentTask: 'u!',
  // --- the A2A face (issue 13): repository a2a.ts (A2aRecords) ---
  /** t!<served node id>!<task id> → JSON {owner, task, updated}: A2A tasks (proto-JSON Task) of a node's A2A callers. */
  a2aTask: 't!',
  /** l!<task id>!<seq: 12 hex> → JSON StreamResponse: a task's event history, gap-free seqs from 1 (the SSE event ids). */
  a2aEvent: 'l!',
  /** m!<packet id> → JSON {node, task}: the A2A task a packet the face sent belongs to (replies find their task by in_reply_to). */
  a2aPacket: 'm!',
  /** s!<context id> → JSON {node, task}: the latest task of an A2A context (replies without in_reply_to find it by conversation). */
  a2aContext: 's!',
  /** f!<sha-256 of the bearer secret, hex> → JSON A2aCredential: A2A client credentials (the secret itself is never stored). */
  a2aCredential: 'f!'
  // retired prefixes: none yet (list them here as `// <prefix> <what it held>, retired in <version>`)
} as const

export type BucketName = keyof typeof Bucket

/** Every prefix in use, in the order listed. */
export const BUCKET_PREFIXES: readonly string[] = Object.values(Bucket)

/** The bucket a key belongs to (the longest matching prefix), if any. */
export function bucketOf (key: string): BucketName | undefined {
  let best: BucketName | undefined
  for (const [name, prefix] of Object.entries(Bucket) as Array<[BucketName, string]>) {
    if (key.startsWith(prefix) && (best === undefined || prefix.length > Bucket[best].length)) best = name
  }
  return best
}
