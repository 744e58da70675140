// Runs async bodies one at a time, in call order; a failed body does not
// stop the ones queued behind it.
export class Serial {
  private tail: Promise<unknown> = Promise.resolve()

  async run<T> (body: () => Promise<T>): Promise<T> {
    const run = this.tail.then(body, body)
    this.tail = run.catch(() => {})
    return await run
  }
}
