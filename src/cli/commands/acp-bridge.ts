import { InvalidArgumentError } from '../../util/errors.js'
import { str } from '../args.js'
import type { Command } from '../command.js'
import { BIN } from '../../control/connect.js'

export const acpBridge: Command = {
  name: 'acp-bridge',
  summary: 'drive an ACP agent as a managed node (started by amesh for runtime: acp)',
  usage: 'amesh acp-bridge --name NODE',
  help: `The supervised process of a managed node whose spec says runtime: acp. It starts the
spec's command as an Agent Client Protocol agent over stdio, follows the node's inbox and maps
SPAWN/MESSAGE to ACP prompts, progress to CHECKPOINTs, permission requests to ESCALATEs and the
stop reason to RETURN or ERROR. Its settings come from AMESH_ACP_CONFIG (set by amesh). See docs/ACP.md.`,
  flags: { name: 'string' },
  run: async (args, home) => {
    const node = str(args, 'name') ?? process.env.AMESH_NODE
    if (node === undefined || node === '') throw new InvalidArgumentError('--name NODE is required')
    const { runBridge } = await import('../../acp/bridge.js')
    return await runBridge({ home, node, bin: process.env.AMESH_BIN ?? BIN })
  }
}
