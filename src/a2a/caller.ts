// Who is calling: the A2A client node a bearer credential stands for.
import type { IncomingMessage } from 'node:http'
import { UnauthenticatedUser, type User } from '@a2a-js/sdk/server'

/** An authenticated A2A caller: a client node of this host (`amesh grant --to-a2a`). */
export class A2aCaller implements User {
  constructor (readonly name: string, readonly nodeId: string, readonly credential: string) {}
  get isAuthenticated (): boolean { return true }
  /** the owner of the caller's tasks: its node id */
  get userName (): string { return this.nodeId }
}

const callers = new WeakMap<IncomingMessage, A2aCaller>()

export function setCaller (req: IncomingMessage, caller: A2aCaller): void { callers.set(req, caller) }
export function callerOf (req: IncomingMessage): A2aCaller | undefined { return callers.get(req) }

/** The SDK's user builder: the caller the auth middleware found (it refused the request otherwise). */
export async function buildUser (req: IncomingMessage): Promise<User> {
  return callers.get(req) ?? new UnauthenticatedUser()
}

/** The caller of a server call (the executor and task store get the SDK's context). */
export function ownerOf (user: User | undefined): string {
  return user instanceof A2aCaller ? user.nodeId : ''
}
