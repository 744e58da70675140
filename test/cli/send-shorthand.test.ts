// `amesh send`: TEXT fills exactly the field `send --help` names for each
// signal, and --file / --stdin send a whole multi-line content as one message.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TEXT_FIELD } from '../../src/packet/rules.js'
import { SIGNALS } from '../../src/packet/types.js'
import { jsonLines, startHost, type TestHost } from '../utils/hosts.js'

interface Row { id: string, signal: string, payload: Record<string, unknown> }

/** What a signal needs besides TEXT (HANDOFF's decision, ESCALATE's options, RETURN's answer) */
function extra (signal: string, answered: string): string[] {
  if (signal === 'HANDOFF') return ['--payload', '{"decision":"d"}']
  if (signal === 'ESCALATE') return ['--payload', '{"options":["a","b"]}']
  if (signal === 'RETURN') return ['--reply-to', answered]
  return []
}

describe('cli - send TEXT shorthand, --file and --stdin', function () {
  this.timeout(120_000)
  let h: TestHost
  let dir: string
  let answered: string

  before(async () => {
    h = await startHost()
    dir = mkdtempSync(join(tmpdir(), 'am-send-'))
    await h.ok(['node', 'add', 'lead'])
    await h.ok(['node', 'add', 'w', '--parent', 'lead'])
    await h.ok(['node', 'add', 'w2', '--parent', 'lead'])
    // a message from w for lead to answer with RETURN
    answered = (JSON.parse(await h.ok(['send', '--as', 'w', 'lead', 'task', '--json'])) as { id: string }).id
  })

  after(async () => {
    await h?.cleanup()
    rmSync(dir, { recursive: true, force: true })
  })

  async function last (node: string): Promise<Row> {
    const rows = jsonLines<Row>(await h.ok(['inbox', node, '--json', '--after', '0', '--limit', '10000']))
    return rows[rows.length - 1]
  }

  it('the help names the field TEXT fills for every signal', async () => {
    const help = await h.ok(['send', '--help'])
    for (const s of SIGNALS) assert.ok(help.includes(`${s} → ${TEXT_FIELD[s]}`), `help names ${s}'s field`)
  })

  for (const signal of SIGNALS) {
    it(`--signal ${signal} "job-1" puts job-1 in payload.${TEXT_FIELD[signal]}`, async () => {
      // within the signal destinations: CHECKPOINT to the parent, HANDOFF to a sibling, RETURN answering w's message
      const [from, target] = signal === 'CHECKPOINT' ? ['w', 'lead'] : signal === 'HANDOFF' ? ['w', 'w2'] : ['lead', 'w']
      const r = await h.run(['send', '--as', from, target, 'job-1', '--signal', signal, ...extra(signal, answered), '--json'])
      assert.equal(r.code, 0, r.stderr)
      const got = await last(target)
      assert.equal(got.signal, signal)
      assert.equal(got.payload[TEXT_FIELD[signal]], 'job-1')
    })
  }

  it('--context-json sets a structured context; TEXT then fills text (SPAWN)', async () => {
    await h.ok(['send', '--as', 'lead', 'w', 'do it', '--signal', 'SPAWN', '--context-json', '{"files":["a.ts"],"notes":{"n":1}}'])
    const got = await last('w')
    assert.deepEqual(got.payload, { text: 'do it', context: { files: ['a.ts'], notes: { n: 1 } } })
  })

  it('--file sends a 200 KiB multi-line file as one message; --stdin the whole stdin', async () => {
    const lines = Array.from({ length: 4000 }, (_, i) => `line ${i} ${'x'.repeat(40)}`)
    let text = lines.join('\n')
    while (Buffer.byteLength(text) < 200 * 1024) text += '\nmore ' + 'y'.repeat(60)
    const file = join(dir, 'big.txt')
    writeFileSync(file, text)
    const before = jsonLines<Row>(await h.ok(['inbox', 'w', '--json', '--after', '0', '--limit', '10000'])).length
    await h.ok(['send', '--as', 'lead', 'w', '--file', file])
    const rows = jsonLines<Row>(await h.ok(['inbox', 'w', '--json', '--after', '0', '--limit', '10000']))
    assert.equal(rows.length, before + 1, 'one message')
    assert.equal(rows[rows.length - 1].payload.text, text)
    await h.ok(['send', '--as', 'lead', 'w', '--stdin'], { input: 'para one\n\npara two\n' })
    assert.equal((await last('w')).payload.text, 'para one\n\npara two\n')
  })
})
