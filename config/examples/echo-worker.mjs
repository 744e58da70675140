#!/usr/bin/env node
// An example managed worker. It follows its inbox and answers every MESSAGE or
// SPAWN with a RETURN to the sender, then acknowledges the packet (so a packet
// is acked only once it was answered: after a crash it is read again).
// amesh gives it AMESH_HOME, AMESH_NODE (its name), AMESH_NODE_ID, AMESH_BIN
// and, when the spec has health.heartbeat, AMESH_HEARTBEAT_MS.
import { execFile, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

const node = process.env.AMESH_NODE
if (!node) { console.error('AMESH_NODE is not set: run me with amesh agent start'); process.exit(2) }
const prefix = process.env.ECHO_PREFIX ?? 'done: '

function ameshArgs (args) {
  return process.env.AMESH_BIN ? [process.execPath, [process.env.AMESH_BIN, ...args]] : ['amesh', args]
}

function amesh (args) {
  const [cmd, argv] = ameshArgs(args)
  return new Promise((resolve) => {
    execFile(cmd, argv, (err, stdout, stderr) => resolve({ ok: err === null, stdout, stderr }))
  })
}

const [cmd, argv] = ameshArgs(['inbox', node, '--follow', '--json'])
const follow = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'inherit'] })
follow.on('exit', (code) => { console.log(`inbox follow ended (exit ${code})`); process.exit(code === 0 ? 0 : 1) })
process.on('SIGTERM', () => { console.log('SIGTERM: bye'); follow.kill('SIGTERM'); process.exit(0) })

const beatMs = Number(process.env.AMESH_HEARTBEAT_MS ?? 0)
if (beatMs > 0) setInterval(() => { void amesh(['agent', 'heartbeat', node]) }, Math.max(200, Math.floor(beatMs / 3)))

console.log(`${node} (${process.env.AMESH_NODE_ID}) following its inbox`)
for await (const line of createInterface({ input: follow.stdout })) {
  const p = JSON.parse(line)
  const text = p.payload.text ?? p.payload.result ?? p.payload.context ?? ''
  console.log(`got ${p.signal} #${p.seq} from ${p.from}: ${text}`)
  if (p.from_id !== p.to_id && (p.signal === 'MESSAGE' || p.signal === 'SPAWN')) {
    const r = await amesh(['send', '--as', node, p.from_id, prefix + text, '--signal', 'RETURN', '--reply-to', p.id, '--json'])
    console.log(r.ok ? `RETURN to ${p.from}: ${r.stdout.trim()}` : `RETURN to ${p.from} failed: ${r.stderr.trim()}`)
  }
  await amesh(['ack', node, String(p.seq)])
}
