// Opening the host's store: private files, the lock turned into a clear
// message, a full disk explained, and the guard that stops acknowledging
// after a failed write and reopens the store (store/store-guard.ts).
import { chmodSync, mkdirSync, readFileSync, readdirSync } from 'node:fs'
import { statfs } from 'node:fs/promises'
import { join } from 'node:path'
import type { HomePaths } from '../control/paths.js'
import { Committer, batchTarget, openDb, type RawDb, type WriteOp } from '../store/db.js'
import { ConsumptionStore } from '../store/consumption.js'
import { InboxStore } from '../store/inbox.js'
import { NodeStore } from '../store/nodes.js'
import { OutboxStore } from '../store/outbox.js'
import { ValueLog } from '../store/value-log.js'
import { ValueLogCollector } from '../store/value-log-gc.js'
import { EXIT_STORE_FAULT, REOPEN_MIN_FREE_BYTES, StoreGuard, isNoSpace } from '../store/store-guard.js'
import { StoreFullError, StoreLockedError, errorMessage, type AmeshError } from '../util/errors.js'
import type { Logger } from '../util/log.js'
import type { HostConfig } from './config.js'
import { PeerBook } from './peer-book.js'

export interface Stores {
  db: RawDb
  committer: Committer
  guard: StoreGuard
  nodes: NodeStore
  inbox: InboxStore
  /** what sessions did with each inbox: pushed and read marks, presence */
  consumption: ConsumptionStore
  outbox: OutboxStore
  peerBook: PeerBook
  /** the large packets of the inbox and outbox, beside LevelDB (none for an in-memory store) */
  values?: ValueLog
  /** deletes the value log's segments no entry points into */
  collector?: ValueLogCollector
}

/** The value log's directory, inside the store's. */
export function valuesDir (paths: HomePaths): string { return join(paths.store, 'values') }

/** Stop collecting and close the value log's files: once the committer is drained. */
export function closeValues (stores: Pick<Stores, 'values' | 'collector'>): void {
  stores.collector?.stop()
  stores.values?.close()
}

/** What to do when a failed write cannot be undone by a reopen (default: log and exit EXIT_STORE_FAULT). */
export type StoreFatal = (err: AmeshError) => void

/**
 * Opens the host's abstract-level store at a path instead of LevelDB on disk
 * (the simulation's in-memory store, bench/sim). Its batches go through the
 * public `batch()`: the native shortcut of batchTarget is classic-level's.
 */
export type OpenLevel = (path: string) => Promise<RawDb>

function pidHint (paths: HomePaths): string {
  try {
    return ` (pid ${readFileSync(paths.pidFile, 'utf8').trim()})`
  } catch {
    return ''
  }
}

/** The store directory 0700 and its files 0600 (a store made before this rule had 0755 / 0644). */
function privateStore (dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  chmodSync(dir, 0o700)
  for (const f of readdirSync(dir, { withFileTypes: true })) chmodSync(join(dir, f.name), f.isDirectory() ? 0o700 : 0o600)
}

/** LevelDB writes when it opens (a table from its log, a manifest): on a full disk it cannot, so say so. */
async function explainOpenFailure (paths: HomePaths, err: unknown): Promise<unknown> {
  let free: number | undefined
  try { const s = await statfs(paths.home); free = s.bavail * s.bsize } catch { /* unknown */ }
  if (!isNoSpace(err) && (free === undefined || free >= REOPEN_MIN_FREE_BYTES)) return err
  return new StoreFullError(`cannot open the store ${paths.store}: its disk has ${free ?? '?'} bytes free, and LevelDB must write to open it (${errorMessage(err)}); free some space and start again`, { cause: err })
}

async function openPrivateDb (paths: HomePaths): Promise<RawDb> {
  // node keys rest in the store: every file LevelDB makes is the owner's only (0600, directories 0700)
  process.umask(process.umask() | 0o077)
  privateStore(paths.store)
  try {
    return await openDb(paths.store)
  } catch (err) {
    if (err instanceof StoreLockedError) {
      throw new StoreLockedError(`amesh is already running for home ${paths.home}${pidHint(paths)}`, { cause: err })
    }
    throw await explainOpenFailure(paths, err)
  }
}

function defaultFatal (log: Logger): StoreFatal {
  return (err) => {
    log(`${err.message}: exiting with status ${EXIT_STORE_FAULT} so that nothing more is acknowledged; free space or repair the disk, then start again`)
    process.exit(EXIT_STORE_FAULT)
  }
}

export async function openStores (paths: HomePaths, config: HostConfig, log: Logger, onFatal?: StoreFatal, openLevel?: OpenLevel): Promise<Stores> {
  const db = openLevel === undefined ? await openPrivateDb(paths) : await openLevel(paths.store)
  const fatal = onFatal ?? defaultFatal(log)
  let values: ValueLog | undefined
  const guard = new StoreGuard({
    path: paths.store,
    minFreeBytes: config.storeMinFreeBytes,
    reopen: async () => { await db.close(); await db.open() },
    log,
    onFatal: (err) => fatal(err)
  })
  try {
    await guard.start()
    const target = openLevel === undefined ? batchTarget(db) : { batch: async (ops: WriteOp[], o: { sync: boolean }) => { await db.batch(ops, o as object) } }
    values = openLevel === undefined ? ValueLog.open(valuesDir(paths), config.durability !== 'none') : undefined
    const committer = new Committer(target, config.durability, guard, undefined, values)
    const nodes = new NodeStore(db, committer)
    await nodes.load()
    const inbox = new InboxStore(db, committer, config.inboxPerNode, config.dedupWindow, undefined, values)
    const consumption = new ConsumptionStore(db, committer, inbox)
    await consumption.warm(nodes.list().map((n) => n.record.id))
    const outbox = new OutboxStore(db, committer, config.outboxPerDestination, values)
    await outbox.load()
    const collector = values === undefined ? undefined : new ValueLogCollector(values, db, log)
    collector?.start()
    return { db, committer, guard, nodes, inbox, consumption, outbox, peerBook: new PeerBook(db, committer), values, collector }
  } catch (err) {
    values?.close()
    guard.stop()
    await db.close().catch(() => {})
    throw err
  }
}
