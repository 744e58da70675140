// CPU time per thread of a process, from /proc/<pid>/task/<tid>/stat (Linux):
// user and system ms, summed by thread name (the main thread marked), and a
// report of the difference between two readings per item.
import { readdir, readFile } from 'node:fs/promises'

export type Threads = Map<string, { user: number, sys: number }>

/**
 * Each thread name's user and system ms so far (threads of one name summed; the main
 * thread apart), or with `byTid` each thread on its own (`name#tid`).
 */
export async function threads (pid: number, byTid = false): Promise<Threads> {
  const out: Threads = new Map()
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [])) {
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '')
    if (stat === '') continue
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const key = tid === String(pid) ? `${name} (main)` : byTid ? `${name}#${tid}` : name
    const prev = out.get(key) ?? { user: 0, sys: 0 }
    out.set(key, { user: prev.user + Number(f[11]) * 10, sys: prev.sys + Number(f[12]) * 10 })
  }
  return out
}

/** Sum readings of several processes (e.g. every sender host of a fan-in) by thread name. */
export function sumThreads (all: Threads[]): Threads {
  const out: Threads = new Map()
  for (const t of all) {
    for (const [name, v] of t) {
      const prev = out.get(name) ?? { user: 0, sys: 0 }
      out.set(name, { user: prev.user + v.user, sys: prev.sys + v.sys })
    }
  }
  return out
}

/** One line per thread name that used CPU between `a` and `b`: user and system µs per item. */
export function threadReport (label: string, a: Threads, b: Threads, n: number): string {
  let out = ''
  let total = 0
  for (const [name, t] of b) {
    const s = a.get(name) ?? { user: 0, sys: 0 }
    const u = (t.user - s.user) / n
    const y = (t.sys - s.sys) / n
    total += u + y
    if (u + y > 0) out += `${label} ${name.padEnd(20)} user ${(u * 1000).toFixed(0).padStart(5)} us  sys ${(y * 1000).toFixed(0).padStart(5)} us per packet\n`
  }
  return `${out}${label} ${'all threads'.padEnd(20)} ${(total * 1000).toFixed(0).padStart(5)} us per packet\n`
}

/** One line: all threads' µs per item, then each thread that used at least `min` µs per item (user+system). */
export function threadLine (a: Threads, b: Threads, n: number, min = 5): string {
  const parts: string[] = []
  let total = 0
  for (const [name, t] of b) {
    const s = a.get(name) ?? { user: 0, sys: 0 }
    const user = (t.user - s.user) * 1000 / n
    const sys = (t.sys - s.sys) * 1000 / n
    total += user + sys
    if (user + sys >= min) parts.push(`${name} ${user.toFixed(0)}+${sys.toFixed(0)}`)
  }
  return `${total.toFixed(0)} [${parts.join(', ')}]`
}
