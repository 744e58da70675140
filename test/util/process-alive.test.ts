import { strict as assert } from 'node:assert'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { processAlive, procState } from '../../src/util/process-alive.js'

// A real zombie: perl forks a child that exits at once and never reaps it.
function zombieMaker (): { parent: ChildProcess, child: Promise<number> } {
  const parent = spawn('perl', ['-e', '$| = 1; my $p = fork(); if ($p == 0) { exit 0 } print "$p\\n"; sleep 60'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const child = new Promise<number>((resolve, reject) => {
    const rl = createInterface({ input: parent.stdout! })
    rl.once('line', (l) => resolve(Number(l)))
    parent.once('exit', () => reject(new Error('perl exited before naming its child')))
  })
  return { parent, child }
}

function hasPython (): boolean {
  return spawnSync('python3', ['-c', 'import ctypes'], { stdio: 'ignore' }).status === 0
}

async function until (what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (ok()) return
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('processAlive - a zombie has exited', function () {
  let maker: ReturnType<typeof zombieMaker> | undefined

  afterEach(() => { maker?.parent.kill('SIGKILL') })

  it('an exited, unreaped child is not alive though kill(pid, 0) still succeeds; its live parent is', async function () {
    if (process.platform !== 'linux') {
      process.stderr.write('      (skipped: zombies are told from /proc, which only Linux has; elsewhere processAlive is kill(pid, 0))\n')
      this.skip()
    }
    maker = zombieMaker()
    const zombie = await maker.child
    await until('the child to be a zombie', () => procState(zombie) === 'Z')
    assert.doesNotThrow(() => process.kill(zombie, 0), 'kill(pid, 0) succeeds on a zombie: the reason for the /proc check')
    assert.equal(processAlive(zombie), false)
    assert.equal(processAlive(maker.parent.pid!), true)
    assert.equal(processAlive(process.pid), true)
  })

  it('a process whose main thread exited while another thread runs is alive (its files, the store lock, are still held) until that thread ends', async function () {
    if (process.platform !== 'linux' || !hasPython()) {
      process.stderr.write('      (skipped: needs Linux /proc and python3 to end a main thread alone)\n')
      this.skip()
    }
    // python's main thread calls pthread_exit: the process's /proc/PID/stat reads Z while the other thread sleeps
    const script = 'import threading, time, ctypes\nt = threading.Thread(target=lambda: (input(), None))\nt.start()\nprint("ready", flush=True)\nctypes.CDLL(None).pthread_exit(None)'
    const child = spawn('python3', ['-c', script], { stdio: ['pipe', 'pipe', 'inherit'] })
    maker = { parent: child, child: Promise.resolve(0) }
    const exit = new Promise((resolve) => child.once('exit', resolve))
    await new Promise((resolve) => createInterface({ input: child.stdout! }).once('line', resolve))
    const pid = child.pid!
    await until('the main thread to be a zombie', () => procState(pid) === 'Z')
    assert.equal(processAlive(pid), true, 'a thread still runs: not exited')
    child.stdin!.end('\n')
    await exit
    await until('the process to be reaped', () => !processAlive(pid))
  })

  it('a pid with no process is not alive', async () => {
    maker = zombieMaker()
    const parent = maker.parent.pid!
    maker.parent.kill('SIGKILL')
    await new Promise((resolve) => maker!.parent.once('exit', resolve))
    await until('the parent to be reaped', () => { try { process.kill(parent, 0); return false } catch { return true } })
    assert.equal(processAlive(parent), false)
    assert.equal(procState(parent), undefined)
  })
})
