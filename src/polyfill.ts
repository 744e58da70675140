// Node 20 lacks Promise.withResolvers, which libp2p 2.x dependencies call.
// Every entry point (bin, tests, benches) loads this module first.
interface Resolvers<T> {
  promise: Promise<T>
  resolve: (value: T | PromiseLike<T>) => void
  reject: (reason?: unknown) => void
}

type WithResolvers = <T>() => Resolvers<T>

const ctor = Promise as unknown as { withResolvers?: WithResolvers }

if (typeof ctor.withResolvers !== 'function') {
  ctor.withResolvers = function withResolvers<T> (): Resolvers<T> {
    let resolve!: Resolvers<T>['resolve']
    let reject!: Resolvers<T>['reject']
    const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej })
    return { promise, resolve, reject }
  }
}

export {}
