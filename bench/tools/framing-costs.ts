// CPU per `send` request of the two control framings, in one process,
// interleaved (median of 5 rounds): the client's encoding (a JSON line as
// ControlClient wrote it, a binary request frame) and the daemon's reading
// (JSON.parse of the line, decodeRequestFrame of the frame), for a 512 B and
// a 64 KiB text:
//   node --import ./dist/src/polyfill.js dist/bench/tools/framing-costs.js
import { FRAME_HEAD } from '../../src/control/frame-head.js'
import { decodeRequestFrame, encodeRequestFrame } from '../../src/control/request-frame.js'
import { text } from '../lib/daemon.js'

function cpuUs (fn: (i: number) => unknown, n: number): number {
  const c0 = process.cpuUsage()
  for (let i = 0; i < n; i++) fn(i)
  const c = process.cpuUsage(c0)
  return (c.user + c.system) / n
}

const median = (xs: number[]): string => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)].toFixed(2)

for (const size of [512, 64 * 1024]) {
  const params = { as: 'tx', to: 'rx', text: text(size) }
  const n = size === 512 ? 200_000 : 3000
  const line = Buffer.from(JSON.stringify({ id: 1, method: 'send', params }) + '\n')
  const frame = encodeRequestFrame(1, 'send', params) as Buffer
  const body = frame.subarray(FRAME_HEAD)
  const rows: number[][] = [[], [], [], []]
  for (let r = 0; r < 5; r++) {
    rows[0].push(cpuUs((i) => Buffer.from(JSON.stringify({ id: i, method: 'send', params }) + '\n'), n))
    rows[1].push(cpuUs((i) => encodeRequestFrame(i, 'send', params), n))
    rows[2].push(cpuUs(() => JSON.parse(line.toString('utf8', 0, line.length - 1)), n))
    rows[3].push(cpuUs(() => decodeRequestFrame({ id: 1, body }), n))
  }
  process.stdout.write(`${size} B text: client JSON line ${median(rows[0])} µs, frame ${median(rows[1])} µs | daemon JSON.parse ${median(rows[2])} µs, decodeRequestFrame ${median(rows[3])} µs\n`)
}
