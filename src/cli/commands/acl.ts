import { InvalidArgumentError } from '../../util/errors.js'
import { bool, needPositionals, parseDuration, str, type Parsed } from '../args.js'
import type { Command } from '../command.js'
import { callDaemon, queryDaemon } from '../../control/connect.js'
import type { Signal, Zone } from '../../packet/types.js'
import { printJson, printLine } from '../output.js'

function csv (v: string | undefined, upper: boolean): string[] | undefined {
  if (v === undefined) return undefined
  return v.split(',').map((s) => s.trim()).filter((s) => s !== '').map((s) => upper ? s.toUpperCase() : s.toLowerCase())
}

function need (args: Parsed, flag: string, usage: string): string {
  const v = str(args, flag)
  if (v === undefined) throw new InvalidArgumentError(`--${flag} is required; usage: ${usage}`)
  return v
}


async function hostGrant (args: Parsed, home: string, expires: string | undefined): Promise<number> {
  const r = await callDaemon(home, 'agent.host-grant', { to: need(args, 'to', grant.usage), cmd: need(args, 'cmd', grant.usage), expires_ms: expires === undefined ? undefined : parseDuration(expires) })
  if (bool(args, 'json')) printJson(r)
  else printLine(`${String(r.token_id)}  ${String(r.audience)} may run ${String(r.cmd)} on this host until ${String(r.expires)}${r.handed === true ? '' : '  (audience host offline: handed over when it connects)'}`)
  return 0
}

/** `grant --to-a2a NAME`: a new A2A client identity, its grant, and the bearer secret (printed once). */
async function a2aGrant (args: Parsed, home: string, expires: string | undefined): Promise<number> {
  const r = await callDaemon(home, 'a2a.client.grant', {
    as: need(args, 'as', grant.usage),
    name: need(args, 'to-a2a', grant.usage),
    signals: csv(str(args, 'signals'), true) as Signal[] | undefined,
    expires_ms: expires === undefined ? undefined : parseDuration(expires)
  })
  if (bool(args, 'json')) printJson(r)
  else {
    printLine(`A2A client ${r.name} (${r.node_id}) may call ${r.grantor} until ${r.expires}; grant ${r.token_id}`)
    printLine(`bearer secret (shown once, keep it safe): ${r.secret}`)
  }
  return 0
}

export const grant: Command = {
  name: 'grant',
  summary: 'let another node send to one of yours (a signed capability token)',
  usage: 'amesh grant --as ISSUER --to NODE [--signals S,..] [--zones Z,..] [--expires DURATION] [--sub NODE] [--delegate TOKEN_ID] [--json]\n       amesh grant --host --to NODE --cmd CMD [--expires DURATION] [--json]\n       amesh grant --as ISSUER --to-a2a NAME [--signals S,..] [--expires DURATION] [--json]',
  help: `Issues a capability token signed by ISSUER that lets NODE send to ISSUER (or to --sub, a
node ISSUER is an ancestor of), limited to --signals and --zones (default: any), until
--expires (default 30d). The token is handed to NODE's host, whose sends carry it.
With --delegate TOKEN_ID, ISSUER re-grants a token it holds, only narrower (fewer
signals/zones, earlier expiry); widening is refused.
With --host, this host (its host-level issuer key) grants NODE the command --cmd on this
host, e.g. --cmd /agent/start lets NODE place managed nodes here (docs/AGENTS.md).
With --to-a2a NAME, this host mints a client identity NAME for a standard A2A client, grants
it ISSUER (limited to --signals) and prints its bearer secret once: an A2A client calling
ISSUER's A2A face with it acts on the mesh as NAME (docs/A2A.md). A new task is a SPAWN,
so a MESSAGE-only grant can only continue tasks. Revoke the printed grant to cut it off.`,
  flags: { as: 'string', to: 'string', signals: 'string', zones: 'string', expires: 'string', sub: 'string', delegate: 'string', host: 'boolean', cmd: 'string', 'to-a2a': 'string' },
  run: async (args, home) => {
    needPositionals(args, 0, grant.usage)
    const expires = str(args, 'expires')
    if (expires !== undefined && parseDuration(expires) <= 0) throw new InvalidArgumentError(`--expires must be longer than 0 (e.g. 30m, 7d); got "${expires}"`)
    if (bool(args, 'host')) return await hostGrant(args, home, expires)
    if (str(args, 'to-a2a') !== undefined) return await a2aGrant(args, home, expires)
    if (str(args, 'cmd') !== undefined) throw new InvalidArgumentError('--cmd is only for host grants (--host); node grants allow sending')
    // the daemon checks the signal and zone names (and words the error)
    const r = await callDaemon(home, 'grant', {
      as: need(args, 'as', grant.usage),
      to: need(args, 'to', grant.usage),
      sub: str(args, 'sub'),
      signals: csv(str(args, 'signals'), true) as Signal[] | undefined,
      zones: csv(str(args, 'zones'), false) as Zone[] | undefined,
      expires_ms: expires === undefined ? undefined : parseDuration(expires),
      delegate: str(args, 'delegate')
    })
    if (bool(args, 'json')) printJson(r)
    else printLine(`${String(r.token_id)}  ${String(r.audience)} may send to ${String(r.subject)} (signals ${String(r.signals)}, zones ${String(r.zones)}) until ${String(r.expires)}${r.handed === true ? '' : '  (audience host offline: handed over when it connects)'}`)
    if (typeof r.expires_clamped === 'string') process.stderr.write(`amesh grant: --expires clamped ${r.expires_clamped}\n`)
    return 0
  }
}

export const revoke: Command = {
  name: 'revoke',
  summary: 'revoke a grant (and every delegation through it)',
  usage: 'amesh revoke TOKEN_ID --as ISSUER',
  help: 'Signs a revocation of TOKEN_ID by ISSUER (an issuer in its chain). It applies on this host at\nonce and spreads to other hosts (pushed to connected hosts, gossip, and on every connect).',
  flags: { as: 'string' },
  run: async (args, home) => {
    needPositionals(args, 1, revoke.usage)
    const r = await callDaemon(home, 'revoke', { as: need(args, 'as', revoke.usage), token_id: args.positionals[0] })
    if (bool(args, 'json')) printJson(r)
    else printLine(`revoked ${String(r.token)}`)
    return 0
  }
}

export const grants: Command = {
  name: 'grants',
  summary: 'grants held and issued on this host',
  usage: 'amesh grants [--json]',
  help: 'Lists the grant tokens this host\'s nodes hold (may use) and have issued, with audience,\nsubject, signals, zones, expiry and whether revoked.',
  flags: {},
  run: async (args, home) => {
    needPositionals(args, 0, grants.usage)
    const r = await queryDaemon(home, 'grants', {})
    if (bool(args, 'json')) { printJson(r); return 0 }
    for (const [kind, list] of [['held', r.held], ['issued', r.issued]] as const) {
      for (const g of list) printLine(`${kind.padEnd(6)} ${String(g.token_id)} ${String(g.audience)} -> ${String(g.subject)} signals ${JSON.stringify(g.signals)} until ${String(g.expires)}${g.revoked === true ? ' REVOKED' : ''}`)
    }
    return 0
  }
}

function blockCommand (on: boolean): Command {
  const verb = on ? 'block' : 'unblock'
  const c: Command = {
    name: verb,
    summary: on ? 'refuse all packets from a sender (beats any grant or group)' : 'lift a block',
    usage: `amesh ${verb} --as NODE SENDER`,
    help: on
      ? 'NODE refuses everything from SENDER, whatever grant or group rule would allow it. The sender\nsees the same denial as an ungranted sender.'
      : 'Removes NODE\'s block on SENDER.',
    flags: { as: 'string' },
    run: async (args, home) => {
      needPositionals(args, 1, c.usage)
      const r = await callDaemon(home, 'block', { as: need(args, 'as', c.usage), sender: args.positionals[0], on })
      if (bool(args, 'json')) printJson(r)
      else printLine(`${on ? 'blocked' : 'unblocked'} ${String(r.sender)}`)
      return 0
    }
  }
  return c
}

export const block = blockCommand(true)
export const unblock = blockCommand(false)

export const profile: Command = {
  name: 'profile',
  summary: 'set a node\'s access-matrix profile (only narrows)',
  usage: 'amesh profile --as NODE [--receives-from N,..] [--sends-to N,..] [--zones Z,..] [--signals S,..] [--json]',
  help: 'Sets NODE\'s profile: who may send to it, whom it may send to, the zones and signals it may\nuse. A profile never widens what lineage and grants allow. Entries are node names or ids.\nWith no list flags the profile is cleared.',
  flags: { as: 'string', 'receives-from': 'string', 'sends-to': 'string', zones: 'string', signals: 'string' },
  run: async (args, home) => {
    needPositionals(args, 0, profile.usage)
    const p: Record<string, unknown> = {}
    const lists: Array<[string, string, boolean]> = [['receives-from', 'receives_from', false], ['sends-to', 'sends_to', false], ['zones', 'zone_access', false], ['signals', 'signals', true]]
    for (const [flag, key, upper] of lists) {
      const v = str(args, flag)
      if (v !== undefined) p[key] = upper ? csv(v, true) : v.split(',').map((s) => s.trim()).filter((s) => s !== '')
    }
    const r = await callDaemon(home, 'profile.set', { as: need(args, 'as', profile.usage), profile: p })
    if (bool(args, 'json')) printJson(r)
    else printLine(JSON.stringify(r))
    return 0
  }
}
