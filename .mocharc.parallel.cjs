// `npm run test:parallel`: the whole suite, two test files at a time (mocha
// --parallel, one worker process per job), then the SERIAL files one after the
// other (the same file with AMESH_TEST_PLAN=serial). Each file runs alone in its worker, with the same
// setup as a serial run (dist/test/utils/setup.js is a root-hooks plugin).
//
// Files are handed to the two workers in the order below: the longest first
// (measured: a full run's per-file wall time, hooks included, on the shared
// 2-core machine), so that the last file to finish is a short one. Files not
// named here follow in path order. A file moved or renamed only loses its place
// in the queue; every test file under dist/test still runs exactly once.
// `npx mocha FILE` (.mocharc.json) still runs one file serially.
'use strict'
const { readdirSync } = require('node:fs')
const { join } = require('node:path')

const DIR = 'dist/test'

/**
 * Run after the parallel part, alone: a2a/durability failed in both full parallel
 * runs (698 of 699 green each time) at the same step — the daemon restarted after
 * kill -9 answered `up --detach`, then its control socket was gone within 20 s —
 * and passed in the serial run and in every single-file run (see README, testing notes).
 */
const SERIAL = ['a2a/durability.test.js']

/** Longest files first (seconds in a loaded serial run, 2 cores). */
const LONGEST_FIRST = [
  'nat/relay.test.js', // 248
  'e2e/acl.test.js', // 86
  'mcp/real-clients.test.js', // 75 (installs the Inspector CLI and Claude Code on a clean machine)
  'e2e/lifecycle.test.js', // 71
  'delivery/crash.test.js', // 62
  'mcp/session.test.js', // 60
  'delivery/faults.test.js', // 58
  'mcp/receipts.test.js', // 57
  'delivery/disk-full.test.js', // 54
  'control/send-batch.test.js', // 53
  'discovery/card-flood.test.js', // 52
  'routing/broadcast.test.js', // 46
  'acp/bridge.test.js', // 41
  'agents/local.test.js', // 39
  'sim/delivery.test.js', // 38
  'delivery/partition.test.js', // 31
  'discovery/ssh-join.test.js', // 31
  'e2e/foundation.test.js', // 30
  'mcp/consumption.test.js', // 25
  'delivery/consumer.test.js', // 23
  'agents/remote.test.js', // 22
  'store/schema-workload.test.js', // 21
  'a2a-out/durability.test.js', // 19
  'identity/node-key.test.js', // 19
  'authz/revocation-flood.test.js' // 18
]

function testFiles () {
  return readdirSync(DIR, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.test.js'))
    .sort()
}

function ordered () {
  const all = testFiles().filter((f) => !SERIAL.includes(f))
  const first = LONGEST_FIRST.filter((f) => all.includes(f))
  return [...first, ...all.filter((f) => !first.includes(f))].map((f) => join(DIR, f))
}

module.exports = process.env.AMESH_TEST_PLAN === 'serial' ? serialPart() : parallelPart()

function serialPart () {
  return { require: ['dist/src/polyfill.js', 'dist/test/utils/setup.js'], timeout: 60000, exit: true, spec: SERIAL.map((f) => join(DIR, f)) }
}

function parallelPart () {
  return {
    require: ['dist/src/polyfill.js', 'dist/test/utils/setup.js'],
    timeout: 60000,
    exit: true,
    parallel: true,
    jobs: 2,
    spec: ordered()
  }
}
