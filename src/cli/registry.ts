import type { Command } from './command.js'
import { agent } from './commands/agent.js'
import { mcp } from './commands/mcp.js'
import { approve, deny } from './commands/verdict.js'
import { receipt } from './commands/receipt.js'

/** Commands added by later capabilities (permissions, MCP, managed nodes). */
export const extraCommands: Command[] = [mcp, approve, deny, agent, receipt]
