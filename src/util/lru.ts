// A bounded map that drops its least recently used entry first.

export class BoundedIndex<V> {
  private readonly entries = new Map<string, V>()
  private readonly limit: number

  constructor (limit: number) {
    this.limit = Math.max(1, limit)
  }

  get size (): number {
    return this.entries.size
  }

  get (key: string): V | undefined {
    const value = this.entries.get(key)
    if (value !== undefined) {
      // refresh: Map iteration order is insertion order
      this.entries.delete(key)
      this.entries.set(key, value)
    }
    return value
  }

  set (key: string, value: V): void {
    this.entries.delete(key)
    while (this.entries.size >= this.limit) {
      const oldest = this.entries.keys().next()
      if (oldest.done === true) break
      this.entries.delete(oldest.value)
    }
    this.entries.set(key, value)
  }

  clear (): void {
    this.entries.clear()
  }
}
