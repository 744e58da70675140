// `npm test`: the whole suite, two test files at a time (mocha --parallel --jobs 2,
// one worker process per job, each file alone in its worker with the same root hooks
// as a serial run), then the ALONE files one after the other (the same config with
// AMESH_TEST_PLAN=alone). `npx mocha FILE` (.mocharc.json) still runs one file serially.
//
// Files go to the two workers in the order below: the longest first (wall time, hooks
// included, of a serial run on the shared 2-core machine), so that the last file to
// finish is a short one. Files not named here follow in path order. A file moved or
// renamed only loses its place in the queue; every test file under dist/test runs
// exactly once, in the parallel part or the alone part.
'use strict'
const { readdirSync } = require('node:fs')
const { join } = require('node:path')

const DIR = 'dist/test'

/**
 * Files that do not share the machine with another file. discovery/card-flood keeps
 * both cores busy by itself for ~35 s (66 s of CPU: 100,000 signed cards); beside
 * another file it only slows both down.
 */
const ALONE = ['discovery/card-flood.test.js']

/** Longest first (seconds, a serial run on the shared 2-core machine). */
const LONGEST_FIRST = [
  'nat/relay.test.js', // 150 (mostly waiting on relay circuits)
  'e2e/acl.test.js', // 35
  'e2e/lifecycle.test.js', // 33
  'mcp/real-clients.test.js', // 32 (installs the Inspector CLI and Claude Code on a clean machine)
  'delivery/faults.test.js', // 28
  'a2a/sse-bound.test.js', // 27
  'delivery/partition.test.js', // 27
  'mcp/session.test.js', // 23
  'delivery/disk-full.test.js', // 23
  'delivery/crash.test.js', // 21
  'acp/bridge.test.js', // 20
  'sim/delivery.test.js', // 19
  'mcp/receipts.test.js', // 18
  'e2e/foundation.test.js', // 17
  'control/send-batch.test.js', // 16
  'agents/local.test.js', // 16
  'discovery/ssh-join.test.js', // 14
  'discovery/dht-line.test.js', // 12
  'routing/broadcast.test.js', // 12
  'mcp/consumption.test.js', // 11
  'delivery/consumer.test.js', // 11
  'discovery/table-fill.test.js' // 10
]

const COMMON = { require: ['dist/src/polyfill.js', 'dist/test/utils/setup.js'], timeout: 60000, exit: true, reporter: 'dist/test/utils/file-times.cjs' }

function testFiles () {
  return readdirSync(DIR, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.test.js'))
    .sort()
}

function parallelSpec () {
  const all = testFiles().filter((f) => !ALONE.includes(f))
  const first = LONGEST_FIRST.filter((f) => all.includes(f))
  return [...first, ...all.filter((f) => !first.includes(f))].map((f) => join(DIR, f))
}

function aloneSpec () {
  return testFiles().filter((f) => ALONE.includes(f)).map((f) => join(DIR, f))
}

module.exports = process.env.AMESH_TEST_PLAN === 'alone'
  ? { ...COMMON, spec: aloneSpec() }
  : { ...COMMON, parallel: true, jobs: 2, spec: parallelSpec() }
