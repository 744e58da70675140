// The agent's fs/* requests, answered inside the spec's cwd only (symlinks
// resolved), or declined when the spec's acp.fs says so. Never outside it.
import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import { RequestError, type ReadTextFileRequest, type ReadTextFileResponse, type WriteTextFileRequest, type WriteTextFileResponse } from '@agentclientprotocol/sdk'

export class Sandbox {
  private readonly root: string

  constructor (cwd: string, private readonly mode: 'read-write' | 'read-only' | 'none') {
    this.root = realpathSync(cwd)
  }

  /** The real path of `path`, refused unless it lies inside the root. */
  private inside (path: string, forWrite: boolean): string {
    if (!isAbsolute(path)) throw RequestError.invalidParams({ path }, 'path must be absolute')
    const abs = resolve(path)
    // a file to be written may not exist yet: check its directory's real path
    const real = existsSync(abs) ? realpathSync(abs) : forWrite && existsSync(dirname(abs)) ? resolve(realpathSync(dirname(abs)), abs.slice(dirname(abs).length + 1)) : abs
    const rel = relative(this.root, real)
    if (rel === '' || (!rel.startsWith('..' + sep) && rel !== '..' && !isAbsolute(rel))) return real
    throw new RequestError(-32602, `refused: ${path} is outside the node's working directory ${this.root}`)
  }

  read (req: ReadTextFileRequest): ReadTextFileResponse {
    if (this.mode === 'none') throw new RequestError(-32601, 'refused: file access is off for this node (acp.fs: none)')
    const file = this.inside(req.path, false)
    let text: string
    try { text = readFileSync(file, 'utf8') } catch (err) { throw RequestError.resourceNotFound(req.path) }
    if (req.line !== undefined && req.line !== null) {
      const lines = text.split('\n')
      const from = Math.max(0, req.line - 1)
      text = lines.slice(from, req.limit !== undefined && req.limit !== null ? from + req.limit : undefined).join('\n')
    }
    return { content: text }
  }

  write (req: WriteTextFileRequest): WriteTextFileResponse {
    if (this.mode !== 'read-write') throw new RequestError(-32601, `refused: writing files is off for this node (acp.fs: ${this.mode})`)
    writeFileSync(this.inside(req.path, true), req.content)
    return {}
  }
}
