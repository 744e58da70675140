// The lifecycle every service of a host has: the composition root starts
// them in order and stops them in reverse. Both calls are safe to repeat.

export interface Startable {
  start: () => void | Promise<void>
  stop: () => void | Promise<void>
}
