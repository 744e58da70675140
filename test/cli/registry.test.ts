// The CLI's command table (src/cli/registry.ts): every entry loads the
// command it names, with the summary `amesh --help` shows for it.
import { strict as assert } from 'node:assert'
import { COMMANDS } from '../../src/cli/registry.js'

describe('cli - the command registry', function () {
  it('registry - each entry loads its command, with the same name and summary', async () => {
    for (const entry of COMMANDS) {
      const command = await entry.load()
      assert.equal(command.name, entry.name)
      assert.equal(command.summary, entry.summary, `summary of ${entry.name}`)
    }
  })

  it('registry - names are unique', () => {
    const names = COMMANDS.map((c) => c.name)
    assert.equal(new Set(names).size, names.length)
  })
})
