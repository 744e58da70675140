// A JunkPool worker (test/utils/junk-pool.ts): answers each request with the card-exchange
// message of junkCards() (encoded here: moving the bytes costs the test process nothing).
import '../../src/polyfill.js'
import { parentPort } from 'node:worker_threads'
import { cardsMessage, junkCards } from './junk-cards.js'
import type { JunkRequest } from './junk-pool.js'

parentPort?.on('message', (req: JunkRequest) => {
  const body = cardsMessage(junkCards(req.n, req.hostPeerId, req.first))
  parentPort?.postMessage(body, [body.buffer as ArrayBuffer])
})
