import { strict as assert } from 'node:assert'
import { checkReceiveProfile, checkSendProfile, PROFILE_CODES, validateProfile, type AccessFacts, type Profile, type ProfileCode } from '../../src/acl/profile.js'

const facts: AccessFacts = {
  sender: { id: 'did:key:zSender', name: 'worker-1' },
  target: { id: 'did:key:zTarget', name: 'lead' },
  signal: 'RETURN',
  zone: 'project'
}

describe('acl/profile', () => {
  it('profile - validate keeps a good profile and drops duplicates', () => {
    const profile = validateProfile({ receives_from: ['lead', 'lead'], sends_to: ['did:key:zX'], zone_access: ['project'], signals: ['RETURN', 'MESSAGE'] })
    assert.deepEqual(profile, { receives_from: ['lead'], sends_to: ['did:key:zX'], zone_access: ['project'], signals: ['RETURN', 'MESSAGE'] })
    assert.deepEqual(validateProfile({}), {})
  })

  const invalid: Array<{ name: string, value: unknown, error: string }> = [
    { name: 'an unknown zone', value: { zone_access: ['moon'] }, error: 'ProfileZoneError' },
    { name: 'an unknown signal', value: { signals: ['SHOUT'] }, error: 'ProfileSignalError' },
    { name: 'an unknown field', value: { can_spawn: true }, error: 'ProfileMalformedError' },
    { name: 'a non-object', value: 'lead', error: 'ProfileMalformedError' },
    { name: 'null', value: null, error: 'ProfileMalformedError' },
    { name: 'a non-list entry', value: { sends_to: 'lead' }, error: 'ProfileMalformedError' },
    { name: 'an empty name', value: { receives_from: [''] }, error: 'ProfileMalformedError' },
    { name: 'a non-string entry', value: { signals: [1] }, error: 'ProfileMalformedError' }
  ]
  for (const { name, value, error } of invalid) {
    it(`profile - validate rejects ${name} with ${error}`, () => {
      assert.throws(() => validateProfile(value), { name: error })
    })
  }

  const send: Array<{ name: string, profile: Profile | undefined, code: ProfileCode | null }> = [
    { name: 'no profile', profile: undefined, code: null },
    { name: 'an empty profile', profile: {}, code: null },
    { name: 'an allowed signal, zone and target (by name)', profile: { signals: ['RETURN'], zone_access: ['project'], sends_to: ['lead'] }, code: null },
    { name: 'a target listed by id', profile: { sends_to: ['did:key:zTarget'] }, code: null },
    { name: 'a signal not allowed', profile: { signals: ['MESSAGE'] }, code: 'PROFILE_SIGNAL' },
    { name: 'a zone not allowed', profile: { zone_access: ['kernel'] }, code: 'PROFILE_ZONE' },
    { name: 'a target not listed', profile: { sends_to: ['worker-2'] }, code: 'PROFILE_TARGET' },
    { name: 'receives_from (not a send rule)', profile: { receives_from: [] }, code: null }
  ]
  for (const { name, profile, code } of send) {
    it(`profile - send with ${name}: ${code ?? 'allowed'}`, () => {
      assert.equal(checkSendProfile(profile, facts)?.code ?? null, code)
    })
  }

  const receive: Array<{ name: string, profile: Profile | undefined, code: ProfileCode | null }> = [
    { name: 'no profile', profile: undefined, code: null },
    { name: 'an allowed sender (by name)', profile: { receives_from: ['worker-1'] }, code: null },
    { name: 'an allowed sender (by id)', profile: { receives_from: ['did:key:zSender'] }, code: null },
    { name: 'a signal not accepted', profile: { signals: ['MESSAGE'] }, code: 'PROFILE_SIGNAL' },
    { name: 'a zone not accepted', profile: { zone_access: ['personal'] }, code: 'PROFILE_ZONE' },
    { name: 'a sender not listed', profile: { receives_from: ['worker-2'] }, code: 'PROFILE_SENDER' },
    { name: 'an empty receives_from', profile: { receives_from: [] }, code: 'PROFILE_SENDER' },
    { name: 'sends_to (not a receive rule)', profile: { sends_to: [] }, code: null }
  ]
  for (const { name, profile, code } of receive) {
    it(`profile - receive with ${name}: ${code ?? 'allowed'}`, () => {
      assert.equal(checkReceiveProfile(profile, facts)?.code ?? null, code)
    })
  }

  it('profile - every profile code has a case', () => {
    const codes = new Set([...send, ...receive].map((c) => c.code).filter((c) => c !== null))
    assert.deepEqual(codes, new Set(PROFILE_CODES))
  })

  it('profile - a denial names the node and what was refused', () => {
    const denial = checkReceiveProfile({ receives_from: ['worker-2'] }, facts)
    assert.ok(denial !== null)
    assert.match(denial.reason, /lead/)
    assert.match(denial.reason, /worker-1/)
  })
})
