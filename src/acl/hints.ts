// The command that fixes a send denial, and where to run it. A grant cannot
// widen a profile, so a profile denial names the `amesh profile` change; a
// grant must be issued on the target's host, so the hint says which host.
import type { Signal, Zone } from '../packet/types.js'
import type { Party } from './decide.js'
import { checkSendProfile, type Profile } from './profile.js'
import type { TokenPolicy } from './token.js'

const SHELL_SAFE = /^[A-Za-z0-9._:@%+=,/-]+$/

function shellWord (word: string): string {
  return SHELL_SAFE.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`
}

export interface HintFacts {
  readonly sender: Party
  readonly target: Party
  readonly signal: Signal
  readonly zone: Zone
  /** the peer id of the target's host when it is not this host */
  readonly targetHost?: string
}

function label (p: Party): string {
  return p.name ?? p.id
}

/** `amesh profile --as NODE …` that sets this profile (every list kept, one extended). */
function profileCommand (node: string, profile: Profile): string {
  const parts = [`amesh profile --as ${shellWord(node)}`]
  const lists: Array<[string, readonly string[] | undefined]> = [
    ['--receives-from', profile.receives_from], ['--sends-to', profile.sends_to], ['--zones', profile.zone_access], ['--signals', profile.signals]
  ]
  for (const [flag, list] of lists) if (list !== undefined) parts.push(`${flag} ${shellWord(list.join(','))}`)
  return parts.join(' ')
}

function add<T> (list: readonly T[] | undefined, item: T): readonly T[] | undefined {
  return list === undefined || list.includes(item) ? list : [...list, item]
}

function where (f: HintFacts, ofTarget: boolean): string {
  if (!ofTarget || f.targetHost === undefined) return 'on this host'
  return `on ${label(f.target)}'s host (peer ${f.targetHost})`
}

function profileHint (code: string, f: HintFacts): string {
  const senderSide = code === 'PROFILE_TARGET' || checkSendProfile(f.sender.profile, f) !== null
  const owner = senderSide ? f.sender : f.target
  const p: Profile = owner.profile ?? {}
  const changed: Profile = code === 'PROFILE_SIGNAL'
    ? { ...p, signals: add(p.signals, f.signal) }
    : code === 'PROFILE_ZONE'
      ? { ...p, zone_access: add(p.zone_access, f.zone) }
      : senderSide
        ? { ...p, sends_to: add(p.sends_to, label(f.target)) }
        : { ...p, receives_from: add(p.receives_from, label(f.sender)) }
  return `a grant cannot widen a profile; ${where(f, !senderSide)}: ${profileCommand(label(owner), changed)}`
}

/** What to run, and where, so that this send is allowed; undefined when no command can. */
export function denialHint (code: string, f: HintFacts): string | undefined {
  if (code.startsWith('PROFILE_')) return profileHint(code, f)
  const grant = `amesh grant --as ${shellWord(label(f.target))} --to ${shellWord(label(f.sender))} --signals ${f.signal}`
  return `to allow it, ${where(f, true)}: ${grant}`
}

/** Which flag narrows a delegation back within the delegated grant's policy. */
export function narrowingHint (parent: TokenPolicy, child: TokenPolicy): string {
  const fixes: string[] = []
  if (parent.signals !== undefined && (child.signals === undefined || child.signals.some((x) => !parent.signals?.includes(x)))) fixes.push(`--signals ${parent.signals.join(',')} (or fewer)`)
  if (parent.zones !== undefined && (child.zones === undefined || child.zones.some((x) => !parent.zones?.includes(x)))) fixes.push(`--zones ${parent.zones.join(',')} (or fewer)`)
  return fixes.length === 0 ? '' : `; the delegated grant allows only that much: pass ${fixes.join(' and ')}`
}
