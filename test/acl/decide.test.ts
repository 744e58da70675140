import { strict as assert } from 'node:assert'
import { generateNodeKey, type NodeKey } from '../../src/identity/node-key.js'
import { decide, grantCommandFor, sameGroup, type DecideInput, type Decision, type Party } from '../../src/acl/decide.js'
import { encodeToken, issueToken, tokenId } from '../../src/acl/token.js'
import { TokenCache } from '../../src/acl/token-cache.js'
import { HOUR, NOW } from './fixtures.js'

/** A 4-level tree: root → a → (b1, b2); b1 → c → d; plus an unrelated root `x`. */
const names = ['root', 'a', 'b1', 'b2', 'c', 'd', 'x'] as const
type Name = typeof names[number]
const parents: Record<Name, Name | null> = { root: null, a: 'root', b1: 'a', b2: 'a', c: 'b1', d: 'c', x: null }
const key = Object.fromEntries(names.map((n) => [n, generateNodeKey()])) as Record<Name, NodeKey>

function party (name: Name, extra: Partial<Party> = {}): Party {
  const parent = parents[name]
  return { id: key[name].id, name, parent: parent === null ? null : key[parent].id, ...extra }
}

function ancestors (id: string): string[] {
  const out: string[] = []
  let name = names.find((n) => key[n].id === id)
  while (name !== undefined && parents[name] !== null) {
    name = parents[name] ?? undefined
    if (name !== undefined) out.push(key[name].id)
  }
  return out
}

function input (from: Name, to: Name, extra: Partial<DecideInput> = {}): DecideInput {
  return {
    sender: party(from),
    target: party(to),
    signal: 'MESSAGE',
    zone: 'project',
    blocked: false,
    now: NOW,
    isRevoked: () => false,
    speaksFor: (issuer, sub) => issuer === sub || ancestors(sub).includes(issuer),
    cache: new TokenCache(),
    ...extra
  }
}

function grantFrom (issuer: Name, from: Name, to: Name, fields: { exp?: number, signals?: Array<'MESSAGE' | 'SPAWN'> } = {}): Uint8Array[] {
  const pol = fields.signals === undefined ? {} : { signals: fields.signals }
  return [encodeToken(issueToken(key[issuer], { aud: key[from].id, sub: key[to].id, pol, exp: fields.exp ?? NOW + HOUR }))]
}

const allowGroup: Decision = { allow: true, via: 'group' }
const allowGrant: Decision = { allow: true, via: 'grant' }

describe('acl/decide - group rule over a 4-level tree', () => {
  const table: Array<[from: Name, to: Name, group: boolean]> = [
    ['root', 'a', true], ['a', 'root', true], ['b1', 'b2', true], ['b2', 'b1', true], ['a', 'b1', true],
    ['b1', 'c', true], ['c', 'b1', true], ['c', 'd', true], ['d', 'c', true], ['d', 'd', true],
    ['root', 'b1', false], ['a', 'c', false], ['b1', 'd', false], ['d', 'b1', false], ['d', 'root', false],
    ['b2', 'c', false], ['root', 'x', false], ['x', 'root', false], ['x', 'd', false]
  ]
  for (const [from, to, group] of table) {
    it(`decide - ${from} → ${to}: ${group ? 'group' : 'NO_GRANT'}`, () => {
      const decision = decide(input(from, to))
      if (group) assert.deepEqual(decision, allowGroup)
      else assert.equal(decision.allow === false && decision.code, 'NO_GRANT')
      assert.equal(sameGroup(party(from), party(to)), group)
    })
  }

  it('decide - two roots are not siblings', () => {
    assert.equal(sameGroup({ id: key.root.id, parent: null }, { id: key.x.id, parent: null }), false)
  })
})

describe('acl/decide - grants', () => {
  it('decide - a valid grant from the target allows with via grant', () => {
    assert.deepEqual(decide(input('x', 'd', { grants: grantFrom('d', 'x', 'd') })), allowGrant)
  })

  it('decide - a grant from an ancestor of the target (any depth) allows', () => {
    assert.deepEqual(decide(input('x', 'd', { grants: grantFrom('a', 'x', 'd') })), allowGrant)
    assert.deepEqual(decide(input('x', 'd', { grants: grantFrom('root', 'x', 'd') })), allowGrant)
  })

  it('decide - a grant from a descendant of the target is refused with TOKEN_ISSUER', () => {
    const decision = decide(input('x', 'b1', { grants: grantFrom('d', 'x', 'b1') }))
    assert.equal(decision.allow === false && decision.code, 'TOKEN_ISSUER')
  })

  it('decide - a carried but invalid grant gives the token reason', () => {
    const expired = decide(input('x', 'd', { grants: grantFrom('d', 'x', 'd', { exp: NOW }) }))
    assert.equal(expired.allow === false && expired.code, 'TOKEN_EXPIRED')
    const wrongSignal = decide(input('x', 'd', { signal: 'SPAWN', grants: grantFrom('d', 'x', 'd', { signals: ['MESSAGE'] }) }))
    assert.equal(wrongSignal.allow === false && wrongSignal.code, 'TOKEN_SIGNAL')
    const grants = grantFrom('d', 'x', 'd')
    const revoked = decide(input('x', 'd', { grants, isRevoked: (id) => id === tokenId(grants[0]) }))
    assert.equal(revoked.allow === false && revoked.code, 'TOKEN_REVOKED')
  })

  it('decide - no grant names the parties and the signal', () => {
    const decision = decide(input('x', 'd'))
    assert.equal(decision.allow, false)
    assert.ok(!decision.allow)
    assert.equal(decision.code, 'NO_GRANT')
    assert.match(decision.reason, /^no grant: d has not granted x signal MESSAGE$/)
  })
})

describe('acl/decide - block and profiles', () => {
  const ungranted = decide(input('x', 'd'))

  /** The same send with no lineage relation and without `grants`: what an ungranted sender gets. */
  function ungrantedTwin (from: Name, to: Name, extra: Partial<DecideInput> = {}): Decision {
    const sender = { ...party(from), ...extra.sender, parent: null }
    const target = { ...party(to), ...extra.target, parent: null }
    return decide(input(from, to, { ...extra, grants: undefined, sender, target }))
  }

  const blocked: Array<{ name: string, from: Name, to: Name, allowedUnblocked: boolean, extra?: () => Partial<DecideInput> }> = [
    { name: 'block beats group (siblings)', from: 'b1', to: 'b2', allowedUnblocked: true },
    { name: 'block beats group (child → parent)', from: 'd', to: 'c', allowedUnblocked: true },
    { name: 'block beats group (parent → child)', from: 'c', to: 'd', allowedUnblocked: true },
    { name: 'block beats a valid grant', from: 'x', to: 'd', allowedUnblocked: true, extra: () => ({ grants: grantFrom('d', 'x', 'd') }) },
    { name: 'block beats group and a valid grant together', from: 'b1', to: 'b2', allowedUnblocked: true, extra: () => ({ grants: grantFrom('b2', 'b1', 'b2') }) },
    { name: 'block of an ungranted stranger', from: 'x', to: 'd', allowedUnblocked: false }
  ]
  for (const { name, from, to, allowedUnblocked, extra } of blocked) {
    it(`decide - ${name}, with exactly the ungranted denial`, () => {
      const unblocked = decide(input(from, to, extra?.()))
      assert.equal(unblocked.allow, allowedUnblocked)
      const decision = decide(input(from, to, { ...extra?.(), blocked: true }))
      assert.deepEqual(decision, ungrantedTwin(from, to, extra?.()))
      assert.equal(decision.allow === false && decision.code, 'NO_GRANT')
    })
  }

  it('decide - a blocked sender with an invalid grant or a profile denial sees what an unblocked one sees', () => {
    const expired = { grants: grantFrom('d', 'x', 'd', { exp: NOW }) }
    assert.deepEqual(decide(input('x', 'd', { ...expired, blocked: true })), decide(input('x', 'd', expired)))
    const profile = { target: party('d', { profile: { receives_from: [] } }) }
    assert.deepEqual(decide(input('x', 'd', { ...profile, blocked: true })), decide(input('x', 'd', profile)))
  })

  it('decide - a blocked sender and an ungranted one get identical decisions', () => {
    assert.deepEqual(decide(input('x', 'd', { blocked: true, grants: grantFrom('d', 'x', 'd') })), ungranted)
  })

  const profiles: Array<{ name: string, extra: () => Partial<DecideInput>, code: string }> = [
    { name: 'target accepts only other senders', extra: () => ({ target: party('c', { profile: { receives_from: ['b2'] } }) }), code: 'PROFILE_SENDER' },
    { name: 'sender may not send to the target', extra: () => ({ sender: party('d', { profile: { sends_to: ['b1'] } }) }), code: 'PROFILE_TARGET' },
    { name: 'sender may not use the signal', extra: () => ({ sender: party('d', { profile: { signals: ['RETURN'] } }) }), code: 'PROFILE_SIGNAL' },
    { name: 'target has no access to the zone', extra: () => ({ target: party('c', { profile: { zone_access: ['kernel'] } }) }), code: 'PROFILE_ZONE' }
  ]
  for (const { name, extra, code } of profiles) {
    it(`decide - profile narrows the group: ${name} → ${code}`, () => {
      const decision = decide(input('d', 'c', extra()))
      assert.equal(decision.allow === false && decision.code, code)
    })
  }

  it('decide - profile narrows a grant too', () => {
    const decision = decide(input('x', 'd', { grants: grantFrom('d', 'x', 'd'), target: party('d', { profile: { signals: ['RETURN'] } }) }))
    assert.equal(decision.allow === false && decision.code, 'PROFILE_SIGNAL')
  })

  it('decide - a profile never widens: listing an ungranted sender does not allow it', () => {
    const decision = decide(input('x', 'd', { target: party('d', { profile: { receives_from: ['x'] } }) }))
    assert.equal(decision.allow === false && decision.code, 'NO_GRANT')
  })
})

describe('acl/decide - grant command', () => {
  it('decide - grantCommandFor gives the exact CLI command', () => {
    assert.equal(grantCommandFor('worker-1', 'lead', 'RETURN'), 'amesh grant --as lead --to worker-1 --signals RETURN')
  })

  it('decide - grantCommandFor quotes names the shell would split', () => {
    assert.equal(grantCommandFor("bob's agent", 'lead', 'MESSAGE'), "amesh grant --as lead --to 'bob'\\''s agent' --signals MESSAGE")
  })
})
