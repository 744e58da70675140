import { generateNodeKey, importNodeKey, type NodeKey } from '../identity/node-key.js'
import { InvalidArgumentError, NameCollisionError } from '../util/errors.js'
import { fromJsonBytes, scan, toJsonBytes, type Committer, type RawDb } from './db.js'
import { Bucket } from './schema.js'

const NODE_PREFIX = Bucket.node

/** `a2a`: an external A2A agent reached over HTTP from this host (`amesh node add-a2a`); it has no inbox reader and no card of its own on the mesh. */
export type NodeKind = 'external' | 'managed' | 'a2a'

export interface NodeRecord {
  id: string
  name: string
  kind: NodeKind
  /** PKCS#8 DER of the node's private key, base64 */
  key: string
  created: number
  parent?: string
  depth: number
  /** the lineage certificate signed by the parent, base64 */
  lineage?: string
  profile?: Record<string, unknown>
  /** card fields projected from a managed node's spec */
  card?: NodeCardFields
  /** an `a2a` node: where its A2A AgentCard was fetched from, and the card as fetched */
  a2a?: A2aEndpoint
}

/** An external A2A agent: the URL its card was fetched from and the card (JSON as served), validated when added. */
export interface A2aEndpoint {
  cardUrl: string
  card: Record<string, unknown>
}

/** What a spec adds to a node's card (A2A description and skills). */
export interface NodeCardFields {
  description?: string
  skills?: Array<{ id: string, name: string, description: string, tags: string[] }>
}

export interface LocalNode {
  record: NodeRecord
  key: NodeKey
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

export function checkNodeName (name: string): void {
  if (!NAME_RE.test(name)) {
    throw new InvalidArgumentError(`invalid node name "${name}": use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit`)
  }
  if (name.startsWith('did:')) throw new InvalidArgumentError(`a node name may not look like a node id: ${name}`)
}

/** The nodes that live on this host, with their keys; cached in memory. */
export class NodeStore {
  private readonly byId = new Map<string, LocalNode>()
  private readonly byName = new Map<string, LocalNode>()

  constructor (private readonly db: RawDb, private readonly committer: Committer) {}

  async load (): Promise<void> {
    for await (const [, value] of scan(this.db, NODE_PREFIX)) {
      this.remember(fromJsonBytes<NodeRecord>(value))
    }
  }

  private remember (record: NodeRecord): LocalNode {
    const node = { record, key: importNodeKey(Buffer.from(record.key, 'base64')) }
    this.byId.set(record.id, node)
    this.byName.set(record.name, node)
    return node
  }

  get (idOrName: string): LocalNode | undefined {
    return this.byId.get(idOrName) ?? this.byName.get(idOrName)
  }

  list (): LocalNode[] {
    return [...this.byId.values()]
  }

  /** Create a node; the caller fills parent/lineage when there is one. */
  async create (name: string, kind: NodeKind, extra: Partial<Pick<NodeRecord, 'parent' | 'depth' | 'lineage' | 'profile' | 'card' | 'a2a'>> & { key?: NodeKey } = {}): Promise<LocalNode> {
    checkNodeName(name)
    if (this.byName.has(name)) throw new NameCollisionError(`a node named ${name} already exists on this host`)
    const key = extra.key ?? generateNodeKey()
    const record: NodeRecord = {
      id: key.id,
      name,
      kind,
      key: Buffer.from(key.exportPrivate()).toString('base64'),
      created: Date.now(),
      depth: extra.depth ?? 0
    }
    if (extra.parent !== undefined) record.parent = extra.parent
    if (extra.lineage !== undefined) record.lineage = extra.lineage
    if (extra.profile !== undefined) record.profile = extra.profile
    if (extra.card !== undefined) record.card = extra.card
    if (extra.a2a !== undefined) record.a2a = extra.a2a
    await this.committer.write([{ type: 'put', key: NODE_PREFIX + record.id, value: toJsonBytes(record) }])
    return this.remember(record)
  }

  /** Forget a node: its record and key (the caller removes its inbox first). */
  async remove (id: string): Promise<void> {
    const node = this.byId.get(id)
    if (node === undefined) return
    await this.committer.write([{ type: 'del', key: NODE_PREFIX + id }])
    this.byId.delete(id)
    this.byName.delete(node.record.name)
  }

  async update (record: NodeRecord): Promise<void> {
    await this.committer.write([{ type: 'put', key: NODE_PREFIX + record.id, value: toJsonBytes(record) }])
    this.remember(record)
  }
}
