// B_http's server: a raw node:http server on 127.0.0.1 that reads each
// request's body and answers a small JSON-RPC result at once. It runs in its
// own process, as the A2A face runs in the daemon's, so the bench's clients
// never share an event loop with the server they measure. Reports {port}.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { onStop, report, runWorker } from '../lib/worker.js'

const ANSWER = '{"jsonrpc":"2.0","id":1,"result":{}}'

runWorker(async () => {
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => { res.setHeader('Content-Type', 'application/json'); res.end(ANSWER) })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  onStop(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  await report({ type: 'ready', data: { port: (server.address() as AddressInfo).port } })
})
