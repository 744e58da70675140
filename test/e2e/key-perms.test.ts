// Node private keys rest in the store (LevelDB files): the store directory is
// 0700 and every file in it 0600, also for a store made before this rule
// (issue 17, item 8).
import { strict as assert } from 'node:assert'
import { chmodSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { startHost, type TestHost } from '../utils/hosts.js'

/** The mode of the store directory ('.'), of each entry in it and of each entry in its subdirectories (the value log's `values/`); directories end in '/'. */
function modes (dir: string): Record<string, string> {
  const out: Record<string, string> = { '.': (statSync(dir).mode & 0o777).toString(8) }
  const walk = (sub: string, depth: number): void => {
    for (const f of readdirSync(join(dir, sub), { withFileTypes: true })) {
      const rel = sub === '' ? f.name : `${sub}/${f.name}`
      out[f.isDirectory() ? rel + '/' : rel] = (statSync(join(dir, rel)).mode & 0o777).toString(8)
      if (f.isDirectory() && depth === 0) walk(rel, 1)
    }
  }
  walk('', 0)
  return out
}

function allPrivate (dir: string): void {
  const m = modes(dir)
  assert.equal(m['.'], '700', 'store directory 0700')
  const open = Object.entries(m).filter(([f, mode]) => f !== '.' && mode !== (f.endsWith('/') ? '700' : '600'))
  assert.deepEqual(open, [], 'every store file 0600, every directory in it 0700')
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
