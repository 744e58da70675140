// The A2A face end to end: the official @a2a-js/sdk 1.3 client against real
// hosts (issue 13, "Done when" lines 1-2); the node answers through the CLI.
import { strict as assert } from 'node:assert'
import { createPublicKey } from 'node:crypto'
import { TaskState, verifyAgentCardSignature, AgentCard, type StreamResponse } from '@a2a-js/sdk'
import type { Client } from '@a2a-js/sdk/client'
import { publicKeyFromNodeId } from '../../src/identity/node-key.js'
import { grantA2a, sdkClient, startFaceHost, textMessage, waitInbox, type Credential, type FaceHost } from './helpers.js'

/** The Ed25519 public key a did:key names, for the SDK's verifier. */
function didKeyToJwk (kid: string): ReturnType<typeof createPublicKey> {
  const raw = Buffer.from(publicKeyFromNodeId(kid))
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' })
}

async function collect (stream: AsyncGenerator<StreamResponse>, onEvent: (e: StreamResponse) => Promise<void> = async () => {}): Promise<StreamResponse[]> {
  const out: StreamResponse[] = []
  for await (const e of stream) { out.push(e); await onEvent(e) }
  return out
}

function stateOf (e: StreamResponse): TaskState | undefined {
  if (e.payload?.$case === 'statusUpdate') return e.payload.value.status?.state
  if (e.payload?.$case === 'task') return e.payload.value.status?.state
  return undefined
}

describe('a2a face - the official SDK client', function () {
  this.timeout(120_000)
  let a: FaceHost
  let b: FaceHost
  let cred: Credential
  let credB: Credential

  before(async () => {
    a = await startFaceHost()
    b = await startFaceHost()
    await a.ok(['node', 'add', 'lead'])
    await b.ok(['node', 'add', 'other'])
    await a.ok(['join', b.addr])
    cred = await grantA2a(a, 'lead', 'sdk-client')
    credB = await grantA2a(b, 'other', 'sdk-client-b')
  })
  after(async () => { await a?.cleanup(); await b?.cleanup() })

  it('a2a face - the card round-trips and its signature verifies with the SDK', async () => {
    const res = await fetch(`${a.base}/nodes/lead/.well-known/agent-card.json`)
    assert.equal(res.status, 200)
    const json = await res.json() as Record<string, unknown>
    const card = AgentCard.fromJSON(json)
    const bindings = card.supportedInterfaces.map((i) => i.protocolBinding)
    assert.ok(bindings.includes('JSONRPC') && bindings.includes('HTTP+JSON'), bindings.join(','))
    assert.equal(card.capabilities?.streaming, true)
    assert.ok(Object.keys(card.securitySchemes).includes('ameshBearer'))
    // the SDK's verifier canonicalises through AgentCard.fromJSON, so it is given the card's JSON: handed
    // the parsed card (as Client.getAgentCard does) it re-parses a parsed oneOf (securitySchemes) to nothing
    await verifyAgentCardSignature(async (kid) => didKeyToJwk(kid))(json as unknown as AgentCard)
    // and a forged card does not verify
    const forged = { ...json, description: 'forged' }
    await assert.rejects(verifyAgentCardSignature(async (kid) => didKeyToJwk(kid))(forged as unknown as AgentCard))
    const list = await (await fetch(`${a.base}/nodes`)).json() as { nodes: Array<{ name: string }> }
    assert.deepEqual(list.nodes.map((n) => n.name).sort(), ['lead'])
  })

  // each host's face serves its own nodes: both bindings on one host, and a node of the second host
  const cases = [
    { binding: 'JSONRPC', host: () => a, node: 'lead', client: 'sdk-client', secret: () => cred.secret },
    { binding: 'HTTP+JSON', host: () => a, node: 'lead', client: 'sdk-client', secret: () => cred.secret },
    { binding: 'JSONRPC', host: () => b, node: 'other', client: 'sdk-client-b', secret: () => credB.secret }
  ] as const
  for (const c of cases) {
    const binding = c.binding
    it(`a2a face - ${binding} to ${c.node}: a message reaches the inbox, the node's RETURN completes the task with an artifact`, async () => {
      const h = c.host()
      const client: Client = await sdkClient(h.base, c.node, c.secret(), binding)
      const before = (await h.run(['inbox', c.node, '--json'])).stdout.split('\n').filter((l) => l !== '').length
      const seen: StreamResponse[] = await collect(client.sendMessageStream({ tenant: '', message: textMessage(`hello over ${binding}`), configuration: undefined, metadata: undefined }), async (e) => {
        if (e.payload?.$case !== 'task') return
        const [pkt] = (await waitInbox(h, c.node, before + 1)).slice(before)
        assert.equal(pkt.signal, 'SPAWN')
        assert.equal(pkt.from, c.client)
        assert.equal(pkt.payload.context, `hello over ${binding}`)
        assert.equal(pkt.conversation_id, e.payload.value.contextId)
        await h.ok(['send', '--as', c.node, c.client, `done: ${binding}`, '--signal', 'RETURN', '--reply-to', pkt.id])
      })
      assert.equal(seen[0].payload?.$case, 'task')
      assert.equal(stateOf(seen[0]), TaskState.TASK_STATE_WORKING)
      const artifacts = seen.filter((e) => e.payload?.$case === 'artifactUpdate')
      assert.equal(artifacts.length, 1)
      const art = artifacts[0].payload?.$case === 'artifactUpdate' ? artifacts[0].payload.value.artifact : undefined
      assert.deepEqual(art?.parts.map((p) => p.content?.$case === 'text' ? p.content.value : ''), [`done: ${binding}`])
      assert.equal(stateOf(seen[seen.length - 1]), TaskState.TASK_STATE_COMPLETED)
      const taskId = seen[0].payload?.$case === 'task' ? seen[0].payload.value.id : ''
      const task = await client.getTask({ tenant: '', id: taskId, historyLength: undefined })
      assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED)
      assert.equal(task.artifacts.length, 1)
    })
  }
})
