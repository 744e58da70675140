// junkCards() (test/utils/junk.ts) on worker threads: a 100,000-card flood spends
// most of its time making a key pair and a signature per card, work the receiver
// in the test process need not wait for. Each worker makes whole batches in the
// order asked; the caller decides how far ahead it asks.
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'

export interface JunkRequest { n: number, hostPeerId: string, first: number }

interface Waiter { resolve: (body: Uint8Array) => void, reject: (err: Error) => void }

const WORKER = new URL('./junk-worker.js', import.meta.url)

/** One worker and the requests it has yet to answer, oldest first. */
class JunkWorker {
  private readonly worker = new Worker(WORKER)
  private readonly waiting: Waiter[] = []

  constructor () {
    this.worker.on('message', (body: Uint8Array) => this.waiting.shift()?.resolve(body))
    this.worker.on('error', (err) => { for (const w of this.waiting.splice(0)) w.reject(err) })
  }

  async message (req: JunkRequest): Promise<Uint8Array> {
    return await new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject })
      this.worker.postMessage(req)
    })
  }

  async close (): Promise<void> { await this.worker.terminate() }
}

export class JunkPool {
  private readonly workers: JunkWorker[]
  private turn = 0

  constructor (size = Math.max(1, Math.min(2, availableParallelism()))) {
    this.workers = Array.from({ length: size }, () => new JunkWorker())
  }

  get size (): number { return this.workers.length }

  /** The card-exchange message (cardsMessage) of junkCards(n, hostPeerId, first), made on the next worker. */
  async message (n: number, hostPeerId: string, first: number): Promise<Uint8Array> {
    return await this.workers[this.turn++ % this.workers.length].message({ n, hostPeerId, first })
  }

  async close (): Promise<void> {
    await Promise.all(this.workers.map(async (w) => await w.close()))
  }
}
