import { strict as assert } from 'node:assert'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { INTERRUPT_BUDGET } from '../../src/host/jit.js'

const JIT = fileURLToPath(new URL('../../src/host/jit.js', import.meta.url))

/** What tuneJit answers in a fresh node process started with these node flags. */
function tuned (flags: string[]): string {
  const script = `const { tuneJit } = await import(${JSON.stringify(JIT)}); process.stdout.write(String(tuneJit()))`
  return execFileSync(process.execPath, [...flags, '--input-type=module', '-e', script], { encoding: 'utf8' })
}

describe('host - the daemon\'s JIT tier-up budget', function () {
  this.timeout(30_000)

  it('sets a smaller interrupt budget than V8\'s default in the daemon process', () => {
    assert.ok(INTERRUPT_BUDGET < 67_584)
    assert.equal(tuned([]), `--interrupt-budget=${INTERRUPT_BUDGET}`)
  })

  it('leaves the budget to an operator who chose it (a node flag; node refuses V8 flags in NODE_OPTIONS)', () => {
    assert.equal(tuned(['--interrupt-budget=50000']), 'undefined')
    assert.equal(tuned(['--interrupt_budget=50000']), 'undefined')
  })
})
