import { fromJsonBytes, scan, type RawDb } from './db.js'

/** The JSON values under a prefix, in key order; a value that is not JSON goes to `onUnreadable` and is skipped. */
export async function * jsonValues (db: RawDb, prefix: string, onUnreadable: (err: unknown) => void): AsyncGenerator<unknown> {
  for await (const [, value] of scan(db, prefix)) {
    let parsed: unknown
    try {
      parsed = fromJsonBytes<unknown>(value)
    } catch (err) {
      onUnreadable(err)
      continue
    }
    yield parsed
  }
}
