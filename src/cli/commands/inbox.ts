import type { ControlClient } from '../../control/client.js'
import { optionText, valueText } from '../../packet/json-value.js'
import type { RenderedPacket } from '../../packet/render.js'
import { bool, int, needPositionals } from '../args.js'
import type { Command } from '../command.js'
import { connectRunning } from '../../control/connect.js'
import { printLineAsync } from '../output.js'

/**
 * The binary page reader (packet decoder, dag-cbor): loaded only by a read or
 * follow that uses it, not at the CLI's start. One renderer for all the pages
 * of a stream (it keeps the node ids it checked).
 */
async function pageReader (): Promise<(body: Uint8Array) => Iterable<RenderedPacket>> {
  const { eachFollowEntry, EntryRenderer } = await import('../../control/follow-frames.js')
  const renderer = new EntryRenderer()
  return (body) => eachFollowEntry(body, renderer)
}

function human (p: RenderedPacket): string {
  const pl = p.payload
  const value = pl.result ?? pl.context
  const body = pl.text ?? (value === undefined ? undefined : valueText(value)) ?? pl.options?.map(optionText).join(' | ') ?? ''
  return `#${p.seq} ${new Date(p.ts).toISOString()} ${p.from} -> ${p.to} ${p.signal}: ${body}`
}

async function show (p: RenderedPacket, json: boolean): Promise<void> {
  await printLineAsync(json ? JSON.stringify(p) : human(p))
}

/**
 * `--follow`: printed as they come, in order. For people the stream comes in
 * binary pages of stored bytes rendered here (follow-frames.ts: no JSON per
 * entry on either side); --json keeps the NDJSON stream, byte for byte.
 */
async function followInbox (client: ControlClient, node: string, after: number | undefined, json: boolean, autoAck: boolean): Promise<void> {
  let chain = Promise.resolve()
  const onEntry = (p: RenderedPacket): void => {
    chain = chain.then(async () => {
      await show(p, json)
      if (autoAck) await client.call('ack', { node, seq: p.seq })
    })
  }
  if (json) await client.stream('inbox.follow', { node, after }, (event) => onEntry(event as RenderedPacket))
  else {
    const eachFollowEntry = await pageReader()
    await client.frames('inbox.follow', { node, after }, (body) => { for (const p of eachFollowEntry(body)) onEntry(p) })
  }
  await chain
}

export const inbox: Command = {
  name: 'inbox',
  summary: 'read a node\'s inbox',
  usage: 'amesh inbox NODE [--after SEQ] [--limit N] [--follow] [--ack] [--json]',
  help: `Prints NODE's packets after its acked cursor (or after --after SEQ), oldest first, one per
line (--json: one JSON object per line with seq, id, from, from_id, to, to_id, signal,
payload, scope, ts, received (when this host stored it) and the optional envelope fields). --follow keeps streaming new packets.
--ack marks each printed packet read (moves the durable cursor; pushed is not read: see
docs/DELIVERY.md; the senders' hosts get read receipts). Without --follow it
prints at most --limit packets (default 1000, at most 10000), and stops early once
about 16 MiB of packets were read: run it again with --after the last seq for more.
Like every read-only command it never starts a daemon: on a home where none runs it
says so and exits 3.`,
  flags: { after: 'string', limit: 'string', follow: 'boolean', ack: 'boolean' },
  run: async (args, home) => {
    needPositionals(args, 1, inbox.usage)
    const node = args.positionals[0]
    const json = bool(args, 'json')
    const after = int(args, 'after')
    const client = await connectRunning(home)
    try {
      if (bool(args, 'follow')) {
        await followInbox(client, node, after, json, bool(args, 'ack'))
        return 0
      }
      // for people the entries come as one binary frame rendered here (as --follow's pages); --json keeps the JSON reply
      const params = { node, after, limit: int(args, 'limit') }
      let last: number | undefined
      const entries: Iterable<RenderedPacket> = json ? await client.call('inbox.read', params) : (await pageReader())(await client.callFrame('inbox.read', params))
      for (const p of entries) { await show(p, json); last = p.seq }
      if (bool(args, 'ack') && last !== undefined) await client.call('ack', { node, seq: last })
      return 0
    } finally {
      client.close()
    }
  }
}

export const outbox: Command = {
  name: 'outbox',
  summary: 'inspect the outbox (dead letters)',
  usage: 'amesh outbox --dead [--json]',
  help: 'With --dead, lists packets that expired (TTL) or were refused for good by the target host,\nwith the reason. Queue depths per destination are in `amesh status`.',
  flags: { dead: 'boolean', limit: 'string' },
  run: async (args, home) => {
    needPositionals(args, 0, outbox.usage)
    const client = await connectRunning(home)
    try {
      if (!bool(args, 'dead')) {
        const s = await client.call('status')
        await printLineAsync(JSON.stringify(s.outbox))
        return 0
      }
      const dead = await client.call('outbox.dead', { limit: int(args, 'limit') })
      for (const d of dead) await printLineAsync(bool(args, 'json') ? JSON.stringify(d) : `${String(d.packetId)} to ${String(d.to_name)}: ${String(d.code)} ${String(d.reason)}`)
      return 0
    } finally {
      client.close()
    }
  }
}
