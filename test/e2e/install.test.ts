// `npm install -g` from the clone puts a working `amesh` on a PATH: the
// command a user types, found through PATH, not `node bin/amesh`.
import { strict as assert } from 'node:assert'
import { execFile } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from '../utils/hosts.js'

interface Run { code: number, stdout: string, stderr: string }

async function run (cmd: string, args: string[], env: NodeJS.ProcessEnv, timeout = 120_000): Promise<Run> {
  return await new Promise((resolve) => {
    execFile(cmd, args, { env, timeout, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err === null ? 0 : (typeof err.code === 'number' ? err.code : 1), stdout, stderr })
    })
  })
}

describe('e2e install - npm install -g puts amesh on the PATH', function () {
  this.timeout(240_000)
  const prefix = mkdtempSync(join(tmpdir(), 'am-prefix-'))
  const homes = [mkdtempSync(join(tmpdir(), 'am-g1-')), mkdtempSync(join(tmpdir(), 'am-g2-'))]
  rmSync(homes[0], { recursive: true })
  rmSync(homes[1], { recursive: true })
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}` }
  const am = async (home: string, args: string[]): Promise<Run> => await run('amesh', [...args, '--home', home], env)

  after(async () => {
    for (const h of homes) { await am(h, ['down']); rmSync(h, { recursive: true, force: true }) }
    rmSync(prefix, { recursive: true, force: true })
  })

  it('install - amesh --help and a two-host send through the installed command', async () => {
    // the suite has built dist/ (pretest); the install only links the package and its bin
    const npm = await run('npm', ['install', '-g', ROOT, '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts'], process.env)
    assert.equal(npm.code, 0, npm.stderr)
    const which = await run('sh', ['-c', 'command -v amesh'], env)
    assert.equal(realpathSync(which.stdout.trim()), realpathSync(join(ROOT, 'bin', 'amesh')), 'amesh on the PATH is this package\'s bin')
    const help = await run('amesh', ['--help'], env)
    assert.equal(help.code, 0)
    assert.match(help.stdout, /usage: amesh <command>/)
    for (const h of homes) assert.equal((await am(h, ['init', '--listen', '/ip4/127.0.0.1/tcp/0', '--no-mdns'])).code, 0)
    const up = JSON.parse((await am(homes[1], ['up', '--detach', '--json'])).stdout) as { addrs: string[] }
    assert.equal((await am(homes[0], ['up', '--detach'])).code, 0)
    assert.equal((await am(homes[1], ['node', 'add', 'lead'])).code, 0)
    const joined = await am(homes[0], ['join', up.addrs[0]])
    assert.equal(joined.code, 0, joined.stderr)
    assert.equal((await am(homes[0], ['node', 'add', 'alice'])).code, 0)
    const grant = await am(homes[1], ['grant', '--as', 'lead', '--to', 'alice'])
    assert.equal(grant.code, 0, grant.stderr)
    let sent: Run = { code: 1, stdout: '', stderr: '' }
    for (let i = 0; i < 50 && sent.code !== 0; i++) {
      sent = await am(homes[0], ['send', '--as', 'alice', 'lead', 'through the PATH'])
      if (sent.code !== 0) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    assert.equal(sent.code, 0, sent.stderr)
    let texts: string[] = []
    for (let i = 0; i < 100 && texts.length === 0; i++) {
      const inbox = await am(homes[1], ['inbox', 'lead', '--json'])
      texts = inbox.stdout.split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { payload: { text: string } }).payload.text)
      if (texts.length === 0) await new Promise((resolve) => setTimeout(resolve, 200))
    }
    assert.deepEqual(texts, ['through the PATH'])
  })
})
