// The A2A agents' stack (SDK clients, open tasks, answers, the outbox-backed
// transport): loaded by a2a-agents.ts only once an A2A agent is in use, as
// these modules load the A2A SDK.
import { A2aAnswers } from '../delivery/a2a-answers.js'
import { A2aClients } from '../delivery/a2a-client.js'
import { A2aExchange } from '../delivery/a2a-exchange.js'
import { A2aTransport } from '../delivery/a2a-transport.js'
import type { Notices } from '../delivery/notices.js'
import type { Outcomes } from '../delivery/service.js'
import type { A2aTaskStore } from '../store/a2a-tasks.js'
import type { Doomed, OutboxEntry } from '../store/outbox.js'
import type { Logger } from '../util/log.js'
import type { Stores } from './stores.js'

export interface A2aStackComponents {
  stores: Stores
  tasks: A2aTaskStore
  notices: Notices
  label: (id: string) => string
  log: Logger
  outcomes: Outcomes
}

export interface A2aStack { readonly clients: A2aClients, readonly transport: A2aTransport }

/** External A2A agents: SDK clients (bounded), their open tasks, the answers into senders' inboxes, the outbox-backed transport. */
export function buildA2aStack (c: A2aStackComponents): A2aStack {
  const { committer, inbox, outbox, nodes } = c.stores
  const { tasks, notices, label, log, outcomes } = c
  // the agent's acceptance and the dead letters of its queue are rarer than
  // peer acks: their receipt records go in a batch of their own
  const accepted = async (e: OutboxEntry[]): Promise<void> => { await committer.writeUnsynced(outcomes.deliveredOps(e)); outcomes.settled(e) }
  const dead = async (d: Doomed[]): Promise<void> => { await committer.writeUnsynced(outcomes.deadOps(d)); outcomes.settled(d.map((x) => x.entry)) }
  const clients = new A2aClients()
  const answers = new A2aAnswers({ committer, inbox, tasks, log })
  const exchange = new A2aExchange({ inbox, outbox, nodes, tasks, clients, answers, log, accepted })
  return { clients, transport: new A2aTransport({ committer, inbox, outbox, tasks, exchange, notices, label, log, dead }) }
}
