import { connectOrStart } from '../control/connect.js'
import { ControlClient, type ParamsArg } from '../control/client.js'
import type { CallName, ResultOf } from '../control/methods.js'
import { homePaths } from '../control/paths.js'

/**
 * The MCP process's connection to its host daemon. The first connection
 * starts the daemon when none runs; after a drop, the next use reconnects to a
 * running daemon but does not start one (so `amesh down` keeps it down; any
 * other amesh command, or a restart of the session, brings it back).
 */
export class DaemonLink {
  private client?: Promise<ControlClient>
  private resolved?: ControlClient
  private attached = false

  constructor (private readonly home: string) {}

  async get (): Promise<ControlClient> {
    this.client ??= this.attached ? ControlClient.connect(homePaths(this.home).socket) : connectOrStart(this.home)
    try {
      const c = await this.client
      this.attached = true
      this.resolved = c
      return c
    } catch (err) {
      this.client = undefined
      throw err
    }
  }

  async call<K extends CallName> (method: K, ...params: ParamsArg<K>): Promise<ResultOf<K>> {
    const client = await this.get()
    try {
      return await client.call(method, ...params)
    } catch (err) {
      if (err instanceof Error && err.name === 'DaemonNotRunningError') this.reset(client)
      throw err
    }
  }

  /** Drop the connection (if it is still `client`): pending calls and streams on it fail. */
  reset (client?: ControlClient): void {
    if (client !== undefined && client !== this.resolved) { client.close(); return }
    const current = this.client
    this.client = undefined
    this.resolved = undefined
    void current?.then((c) => c.close(), () => {})
  }
}
