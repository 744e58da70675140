import type { Command } from './command.js'

/** Commands added by later capabilities (permissions, MCP, managed nodes). */
export const extraCommands: Command[] = []
