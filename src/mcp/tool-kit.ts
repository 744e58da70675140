import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { z, type ZodRawShape } from 'zod'
import { errorCode, errorMessage } from '../util/errors.js'
import type { Attachment } from './consumption.js'
import type { DaemonLink } from './link.js'
import type { LoopGuard } from './loop-guard.js'

// What every tool of `amesh mcp` shares: its context, results, strict arguments.

export interface ToolContext {
  link: DaemonLink
  node: string
  guard: LoopGuard
  /** false for a tools-only session (an ACP bridge is the inbox's only consumer): no tool marks anything read */
  readsInbox: boolean
  /** the current attachment of this session, once attached */
  attachment?: Attachment
}

export function ok (value: unknown): CallToolResult {
  return { content: [{ type: 'text', text: typeof value === 'string' ? value : JSON.stringify(value, null, 2) }] }
}

function failure (err: unknown): CallToolResult {
  const code = errorCode(err)
  const prefix = code === 'INTERNAL' ? '' : `${code}: `
  return { content: [{ type: 'text', text: prefix + errorMessage(err) }], isError: true }
}

/** Run a tool body; every failure becomes an isError result (tools never throw). */
export async function guarded (body: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return ok(await body())
  } catch (err) {
    return failure(err)
  }
}

/** A tool's arguments as a strict object: unknown fields are refused, as `additionalProperties: false` says. */
export function strictArgs<T extends ZodRawShape> (shape: T): z.ZodObject<T, 'strict'> {
  return z.object(shape).strict()
}
