import { InvalidArgumentError } from '../../util/errors.js'
import { bool, needPositionals, str } from '../args.js'
import type { Command } from '../command.js'
import { connectOrStart } from '../../control/connect.js'
import { printJson, printLine } from '../output.js'

function verdictCommand (behavior: 'allow' | 'deny'): Command {
  const name = behavior === 'allow' ? 'approve' : 'deny'
  const cmd: Command = {
    name,
    summary: `${behavior} a permission request relayed from a Claude Code session`,
    usage: `amesh ${name} REQUEST_ID [--as NODE] [--json]`,
    help: `Answers the permission request REQUEST_ID (the ESCALATE a session with --permission-relay
sent to its approver) with "${behavior}": a reply to the ESCALATE, from the approver node.
--as NODE names the approver node; without it, the one local node whose inbox holds the request.`,
    flags: { as: 'string' },
    run: async (args, home) => {
      needPositionals(args, 1, cmd.usage)
      const requestId = args.positionals[0].toLowerCase()
      if (!/^[a-z]{1,32}$/.test(requestId)) throw new InvalidArgumentError(`invalid request id "${args.positionals[0]}": it is letters a-z`)
      const client = await connectOrStart(home)
      try {
        const r = await client.call('permission.verdict', { as: str(args, 'as'), request_id: requestId, behavior })
        if (bool(args, 'json')) printJson(r)
        else printLine(`${behavior} ${requestId}: sent as ${r.as} to ${r.to} (${r.id} ${r.state})`)
        return 0
      } finally {
        client.close()
      }
    }
  }
  return cmd
}

export const approve = verdictCommand('allow')
export const deny = verdictCommand('deny')
