// CLI output. The CLI is the only place that writes to stdout directly; the
// MCP process never loads this module.

export function printJson (value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n')
}

export function printLine (text: string): void {
  process.stdout.write(text + '\n')
}

/** Write and wait for the pipe to take it (so a follower on a slow pipe stays bounded). */
export async function printLineAsync (text: string): Promise<void> {
  if (process.stdout.write(text + '\n')) return
  await new Promise<void>((resolve) => process.stdout.once('drain', () => resolve()))
}
