import { strict as assert } from 'node:assert'
import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import { generateNodeKey, importNodeKey, nodeIdFromPublicKey, rawPublicKey, verifyByNodeId } from '../../src/identity/node-key.js'

describe('node keys without the JWK export', () => {
  it('the raw public key (sliced from the DER SPKI) equals the JWK x for several keys', () => {
    for (let i = 0; i < 8; i++) {
      const { privateKey } = generateKeyPairSync('ed25519')
      const pub = createPublicKey(privateKey)
      const x = pub.export({ format: 'jwk' }).x as string
      assert.equal(Buffer.from(rawPublicKey(pub)).toString('base64url'), x)
      const node = importNodeKey(new Uint8Array(privateKey.export({ format: 'der', type: 'pkcs8' })))
      assert.equal(Buffer.from(node.publicKey).toString('base64url'), x)
      assert.equal(node.id, nodeIdFromPublicKey(Buffer.from(x, 'base64url')))
    }
  })

  it('refuses a key that is not Ed25519', () => {
    const { publicKey } = generateKeyPairSync('x25519')
    assert.throws(() => rawPublicKey(publicKey), { name: 'InvalidArgumentError' })
  })

  it('creates 50,000 keys in a loop without hanging (generate + raw export, as node creation does; the JWK export deadlocked Node 20.20 within ~20,000)', function () {
    this.timeout(180_000)
    const seen = new Set<string>()
    for (let i = 0; i < 50_000; i++) {
      const { privateKey } = generateKeyPairSync('ed25519')
      seen.add(Buffer.from(rawPublicKey(createPublicKey(privateKey))).toString('latin1'))
    }
    assert.equal(seen.size, 50_000)
    const node = generateNodeKey()
    const msg = new TextEncoder().encode('still signing')
    assert.equal(verifyByNodeId(node.id, msg, node.sign(msg)), true)
  })
})
