// Node private keys rest in the store (LevelDB files): the store directory is
// 0700 and every file in it 0600, also for a store made before this rule
// (issue 17, item 8).
import { strict as assert } from 'node:assert'
import { chmodSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { startHost, type TestHost } from '../utils/hosts.js'

function modes (dir: string): Record<string, string> {
  const out: Record<string, string> = { '.': (statSync(dir).mode & 0o777).toString(8) }
  for (const f of readdirSync(dir)) out[f] = (statSync(join(dir, f)).mode & 0o777).toString(8)
  return out
}

function allPrivate (dir: string): void {
  const m = modes(dir)
  assert.equal(m['.'], '700', 'store directory 0700')
  const open = Object.entries(m).filter(([f, mode]) => f !== '.' && mode !== '600')
  assert.deepEqual(open, [], 'every store file 0600')
  assert.ok(Object.keys(m).some((f) => f.endsWith('.log')), 'the LevelDB log (where new node keys land first) is among them')
}

describe('e2e - key files are the owner\'s only', function () {
  this.timeout(120_000)
  let h: TestHost | undefined

  after(async () => { await h?.cleanup() })

  it('store directory 0700, store files 0600 (node keys), also after a store with 0755/0644 is started again', async () => {
    h = await startHost()
    for (let k = 0; k < 5; k++) await h.ok(['node', 'add', `n${k}`])
    const store = join(h.home, 'store')
    allPrivate(store)
    assert.equal((statSync(join(h.home, 'host.key')).mode & 0o777).toString(8), '600', 'host key 0600')
    await h.stop()
    chmodSync(store, 0o755)
    for (const f of readdirSync(store)) chmodSync(join(store, f), 0o644)
    await h.start()
    await h.ok(['node', 'add', 'after-restart'])
    allPrivate(store)
  })
})
