// A real A2A agent for the tests, built with the official SDK's server side:
// DefaultRequestHandler + InMemoryTaskStore + an executor that echoes,
// served by the SDK's express handlers on 127.0.0.1. It records every
// message it received, so a test can say how many times and in what order.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { Role, TaskState, type AgentCard, type Message, type Part } from '@a2a-js/sdk'
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server'
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express'

export interface EchoAgent {
  url: string
  port: number
  /** the messages the agent received, in order */
  received: Message[]
  stop: () => Promise<void>
}

const textOf = (parts: Part[]): string => parts.map((p) => p.content?.$case === 'text' ? p.content.value : '').join('')

function textPart (text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }
}

function agentMessage (text: string, taskId: string, contextId: string): Message {
  return { messageId: `m-${Math.random().toString(36).slice(2)}`, contextId, taskId, role: Role.ROLE_AGENT, parts: [textPart(text)], metadata: undefined, extensions: [], referenceTaskIds: [] }
}

/**
 * The echo executor: a task that works (a status message), produces an
 * artifact "echo: TEXT" and completes. A text starting with "ask" asks for
 * input first (INPUT_REQUIRED); the answer completes it with "answer: TEXT".
 * A text starting with "slow" waits for the test's gate before it completes.
 * A text starting with "half" gets a reply that ends in half of a UTF-16
 * pair (a lone surrogate, which JSON carries and UTF-8 cannot).
 */
class Echo implements AgentExecutor {
  constructor (private readonly received: Message[], private readonly gate: () => Promise<void>) {}

  async execute (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const msg = ctx.userMessage
    this.received.push(msg)
    const text = textOf(msg.parts)
    const { taskId, contextId } = ctx
    const status = (state: TaskState, say?: string): void => {
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state, message: say === undefined ? undefined : agentMessage(say, taskId, contextId), timestamp: new Date().toISOString() }, metadata: undefined }))
    }
    if (ctx.task === undefined) {
      bus.publish(AgentEvent.task({ id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: new Date().toISOString() }, artifacts: [], history: [msg], metadata: undefined }))
    } else {
      bus.publish(AgentEvent.task(ctx.task))
    }
    if (ctx.task === undefined && text.startsWith('ask')) {
      status(TaskState.TASK_STATE_INPUT_REQUIRED, `which colour? (${text})`)
      bus.finished()
      return
    }
    status(TaskState.TASK_STATE_WORKING, `working on: ${text}`)
    if (text.startsWith('slow')) await this.gate()
    const reply = ctx.task === undefined ? `echo: ${text}${text.startsWith('half') ? ' \ud83d' : ''}` : `answer: ${text}`
    bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, artifact: { artifactId: 'reply', name: 'reply', description: '', parts: [textPart(reply)], metadata: undefined, extensions: [] }, append: false, lastChunk: true, metadata: undefined }))
    status(TaskState.TASK_STATE_COMPLETED)
    bus.finished()
  }

  async cancelTask (): Promise<void> {}
}

function cardOf (base: string, streaming: boolean): AgentCard {
  return {
    name: 'Echo Agent',
    description: 'echoes what it is sent',
    supportedInterfaces: [{ url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: undefined,
    version: '1.0.0',
    capabilities: { streaming, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'echo', description: 'echo', tags: ['echo'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: []
  }
}

/** Start the agent on 127.0.0.1 (`port` 0: any free port; give the old port to bring it back after `stop`). */
export async function startEchoAgent (opts: { port?: number, streaming?: boolean, received?: Message[], gate?: () => Promise<void> } = {}): Promise<EchoAgent> {
  const received = opts.received ?? []
  const app = express()
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(opts.port ?? 0, '127.0.0.1', () => resolve(s))
    s.once('error', reject)
  })
  const port = (server.address() as AddressInfo).port
  const base = `http://127.0.0.1:${port}`
  const handler = new DefaultRequestHandler(cardOf(base, opts.streaming ?? true), new InMemoryTaskStore(), new Echo(received, opts.gate ?? (async () => {})))
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }))
  app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }))
  return {
    url: base,
    port,
    received,
    stop: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
