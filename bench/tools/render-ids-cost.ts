// The client's render of one stream's entries (EntryRenderer, what amesh inbox
// and T4's consumer run) when its from and to ids share a set of the decoder's
// RecentIds cache (recent-ids.ts) and when they do not: in process, 100,000
// renders of 512 B text packets per round, median of rounds 3..ROUNDS.
//   node --import ./dist/src/polyfill.js dist/bench/tools/render-ids-cost.js [ROUNDS]
import { generateNodeKey } from '../../src/identity/node-key.js'
import { encodePacket } from '../../src/packet/codec.js'
import { EntryRenderer } from '../../src/control/follow-frames.js'

/** RecentIds' set of an id (its last three bytes, as recent-ids.ts hashes them) */
const setOf = (id: string): number => { const e = Buffer.from(id); const n = e.length; return (e[n - 1] * 31 + e[n - 2] * 7 + e[n - 3]) & 63 }

function usPerEntry (collide: boolean, rounds: number): number {
  const a = generateNodeKey().id
  let b = generateNodeKey().id
  while ((setOf(b) === setOf(a)) !== collide) b = generateNodeKey().id
  const packets = Array.from({ length: 1000 }, (_, i) => encodePacket({ id: `01M8RWT6PBZDJ9P45D9JGK${String(i).padStart(4, '0')}`, from: a, to: b, from_name: 'src', to_name: 'dst', signal: 'MESSAGE', scope: { files: [], zone: 'project' }, payload: { text: 'x'.repeat(512) }, ts: 1_796_000_000_000 + i }))
  const r = new EntryRenderer()
  const label = (x: string): string => x
  const times: number[] = []
  for (let round = 0; round < rounds; round++) {
    const t0 = process.hrtime.bigint()
    for (let k = 0; k < 100_000; k++) r.render({ seq: k, received: 1, packet: packets[k % 1000] }, label)
    if (round >= 2) times.push(Number(process.hrtime.bigint() - t0) / 1e8)
  }
  times.sort((x, y) => x - y)
  return times[Math.floor(times.length / 2)]
}

const rounds = Math.max(3, Number(process.argv[2] ?? 7))
for (const collide of [true, false, true, false]) {
  process.stdout.write(`${collide ? 'from/to in one set' : 'from/to apart     '}  ${usPerEntry(collide, rounds).toFixed(2)} us/entry\n`)
}
