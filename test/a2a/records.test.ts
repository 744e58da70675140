// The host's A2A task records (src/store/a2a.ts) on a real LevelDB: what a
// commit answers (`held`), a fresh task's commit, and that what they hold
// survives a reopen; the face's HeldTasks asks the host only when it must.
import { strict as assert } from 'node:assert'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HeldTasks } from '../../src/a2a/held-tasks.js'
import { InProcessControl } from '../../src/a2a/in-process.js'
import type { ControlClient } from '../../src/control/client.js'
import { METHODS } from '../../src/control/methods.js'
import { method, type MethodTable } from '../../src/control/server.js'
import { a2aMethods, a2aOff } from '../../src/host/api-a2a.js'
import { A2aRecords } from '../../src/store/a2a.js'
import { Committer, batchTarget, openDb, type RawDb } from '../../src/store/db.js'

const task = (state: string): Record<string, unknown> => ({ id: 't1', contextId: 'c1', status: { state } })

describe('a2a records - held, fresh', () => {
  let dir: string
  let db: RawDb
  let records: A2aRecords

  const open = async (): Promise<void> => {
    db = await openDb(join(dir, 'store'))
    records = new A2aRecords(db, new Committer(batchTarget(db), 'batch'))
  }

  beforeEach(async () => { dir = mkdtempSync(join(tmpdir(), 'am-a2a-records-')); await open() })
  afterEach(async () => { await db.close(); rmSync(dir, { recursive: true, force: true }) })

  it('a2a records - a commit answers whether the record stored is the one given; another owner\'s task is never overwritten', async () => {
    const first = await records.commit({ node: 'lead', task_id: 't1', record: { owner: 'alice', task: task('WORKING') }, event: { task: task('WORKING') }, fresh: true })
    assert.deepEqual(first, { seq: 1, stored: true, held: true })
    // the same record again: nothing written, still held
    assert.deepEqual(await records.commit({ node: 'lead', task_id: 't1', record: { owner: 'alice', task: task('WORKING') } }), { seq: undefined, stored: false, held: true })
    // another owner: refused, not held, the record unchanged
    assert.equal(await records.putTask('lead', 't1', { owner: 'mallory', task: task('CANCELED'), updated: 0 }), false)
    await db.close()
    await open()
    const row = await records.getTask('lead', 't1')
    assert.equal(row?.owner, 'alice')
    assert.deepEqual(row?.task, task('WORKING'))
    assert.equal(await records.putTask('lead', 't1', { owner: 'mallory', task: task('CANCELED'), updated: 0 }), false)
    assert.deepEqual((await records.events('t1', 0, 10)).map((e) => e.seq), [1])
    // after a reopen the next event follows the stored ones
    assert.equal((await records.commit({ node: 'lead', task_id: 't1', event: { statusUpdate: {} } })).seq, 2)
  })

  it('a2a records - the face\'s HeldTasks: load and unchanged save after its own commit ask nothing of the host; a refused or failed write is asked again', async () => {
    // the host's own a2a.* handlers and contract, called in the process as the face calls them
    const handlers = a2aMethods({ db, committer: new Committer(batchTarget(db), 'batch') } as unknown as Parameters<typeof a2aMethods>[0], a2aOff())
    const asked: string[] = []
    let failPut = false
    const table: MethodTable = {}
    for (const [name, h] of Object.entries(handlers)) {
      const spec = METHODS[name as keyof typeof METHODS]
      table[name] = method<unknown>({ ...spec, call: async (p: unknown) => {
        asked.push(name)
        if (name === 'a2a.task.put' && failPut) throw new Error('store refused')
        return await (h.call as (p: unknown) => Promise<unknown>)(p)
      } } as never)
    }
    const client = new InProcessControl(table, { close: () => {} } as unknown as ControlClient)
    const held = new HeldTasks(client)
    const get = async (): Promise<{ owner: string, state: string } | undefined> => {
      const r = await held.get('lead', 't1')
      return r === null ? undefined : { owner: r.owner, state: (r.task.status as { state: string }).state }
    }
    await held.commit({ node: 'lead', task_id: 't1', event: { task: task('WORKING') }, fresh: true }, 'alice', JSON.stringify(task('WORKING')))
    assert.deepEqual(await get(), { owner: 'alice', state: 'WORKING' })
    await held.put('lead', 'alice', 't1', task('WORKING'))
    assert.deepEqual(asked, ['a2a.task.commit'])
    // a change is written; another owner's save goes to the host, which refuses it, and is not taken as held
    await held.put('lead', 'alice', 't1', task('COMPLETED'))
    await held.put('lead', 'mallory', 't1', task('CANCELED'))
    assert.deepEqual(await get(), { owner: 'alice', state: 'COMPLETED' })
    assert.deepEqual(asked, ['a2a.task.commit', 'a2a.task.put', 'a2a.task.put', 'a2a.task.get'])
    // a failed write: the record is asked of the host again, and is what it was
    await held.put('lead', 'alice', 't1', task('COMPLETED'))
    failPut = true
    await assert.rejects(held.put('lead', 'alice', 't1', task('FAILED')), /store refused/)
    assert.deepEqual(await get(), { owner: 'alice', state: 'COMPLETED' })
    assert.deepEqual(asked.slice(4), ['a2a.task.put', 'a2a.task.put', 'a2a.task.get'])
  })
})
