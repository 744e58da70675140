import { readFileSync, writeFileSync } from 'node:fs'
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys'
import type { PrivateKey } from '@libp2p/interface'

/** The host's libp2p key: created once, kept in the home (0600), so the peer id is stable. */
export async function loadOrCreateHostKey (path: string): Promise<PrivateKey> {
  try {
    return privateKeyFromProtobuf(readFileSync(path))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  const key = await generateKeyPair('Ed25519')
  writeFileSync(path, privateKeyToProtobuf(key), { mode: 0o600, flag: 'wx' })
  return key
}
