import type { Command } from './command.js'
import { agent } from './commands/agent.js'
import { acpBridge } from './commands/acp-bridge.js'
import { mcp } from './commands/mcp.js'
import { approve, deny } from './commands/verdict.js'

/** Commands added by later capabilities (permissions, MCP, managed nodes). */
export const extraCommands: Command[] = [mcp, approve, deny, agent, acpBridge]
