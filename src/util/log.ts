import { appendFileSync } from 'node:fs'

/** A component logger: writes to stderr (never stdout) or to a file. */
export type Logger = (message: string) => void

export function createLogger (component: string, file?: string): Logger {
  return (message: string) => {
    const line = `${new Date().toISOString()} ${component} ${message}\n`
    if (file !== undefined) {
      try { appendFileSync(file, line) } catch { process.stderr.write(line) }
    } else {
      process.stderr.write(line)
    }
  }
}

export const silentLogger: Logger = () => {}
