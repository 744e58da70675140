/**
 * amesh's import rules (issue 12, item 9), checked by test/infra/import-rules.test.ts
 * and by hand with `npx depcruise src`.
 *
 * Layers, as ARCHITECTURE §3 and §9 describe them:
 *   faces    src/cli (except `amesh up`, which starts the daemon), src/mcp, and the
 *            face folders later issues add (src/a2a, src/acp): control-socket clients only.
 *   daemon   src/host: the composition root; the only place that wires services.
 *   services src/delivery, src/discovery, src/agents, src/authz, src/routing: take
 *            components, never the host.
 *   contract src/control: shared by faces and the daemon.
 *   pure     src/acl, src/packet: verification and codecs, no I/O.
 *   storage  src/store: byte repositories over LevelDB, no protocol code.
 *
 * Type-only imports count (tsPreCompilationDeps: true in the test), so a cycle or a
 * forbidden import through `import type` is reported like any other.
 */

const FACES = '^src/(cli|mcp|a2a|acp)/'
const UP_COMMAND = '^src/cli/commands/up\\.ts$'
const DAEMON_INTERNALS = '^src/(host|store|delivery|discovery|agents|authz|routing)/'

// Packages and built-ins that do network or disk I/O. Pure code imports none of them.
const IO_PACKAGES = [
  '^node_modules/(libp2p|@libp2p/[^/]+|@chainsafe/[^/]+|@multiformats/multiaddr|' +
    'level|classic-level|abstract-level|it-[^/]+|@modelcontextprotocol/[^/]+)/',
  '^(node:)?(fs|fs/promises|net|dgram|dns|dns/promises|http|https|http2|tls|' +
    'child_process|cluster|worker_threads|readline)$'
]

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'face-imports-daemon-internals',
      comment: 'A face is a control-socket client: it imports src/control, packet types and ' +
        'src/util, never the daemon (host), its services or the store. `amesh up` is the ' +
        'one CLI command that starts the daemon in-process.',
      severity: 'error',
      from: { path: FACES, pathNot: UP_COMMAND },
      to: { path: DAEMON_INTERNALS }
    },
    {
      name: 'face-imports-beyond-contract',
      comment: 'src/mcp and the other non-CLI faces import only src/control, src/packet and ' +
        'src/util of amesh (issue 12 item 3), besides their own folder.',
      severity: 'error',
      from: { path: '^src/(mcp|a2a|acp)/' },
      to: { path: '^src/', pathNot: ['^src/(control|packet|util)/', '^src/$1/'] }
    },
    {
      name: 'pure-imports-stateful-code',
      comment: 'src/acl and src/packet are pure: verification and codecs over values. ' +
        'They import no store, no network service, no daemon, no control socket.',
      severity: 'error',
      from: { path: '^src/(acl|packet)/' },
      to: {
        path: '^src/(store|host|delivery|discovery|control|authz|routing|agents|cli|mcp|a2a|acp)/'
      }
    },
    {
      name: 'pure-imports-io-package',
      comment: 'src/acl and src/packet do no I/O: no libp2p, LevelDB, streams, sockets or files.',
      severity: 'error',
      from: { path: '^src/(acl|packet)/' },
      to: { path: IO_PACKAGES }
    },
    {
      name: 'store-imports-protocol-code',
      comment: 'src/store holds byte repositories over LevelDB (and node keys, from ' +
        'src/identity). It imports no protocol, service, daemon or face code.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: {
        path: '^src/(acl|authz|discovery|delivery|host|routing|control|agents|cli|mcp|a2a|acp)/'
      }
    },
    {
      name: 'store-imports-packet-code',
      comment: 'src/store stores packets as bytes: it may name packet types (import type), ' +
        'never run packet code (codecs, validation, rendering).',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^src/packet/', dependencyTypesNot: ['type-only'] }
    },
    {
      name: 'store-imports-network-package',
      comment: 'src/store talks to LevelDB only, never to the network.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: '^node_modules/(libp2p|@libp2p/[^/]+|@chainsafe/[^/]+|@multiformats/multiaddr|it-[^/]+)/' }
    },
    {
      name: 'service-imports-host',
      comment: 'Services receive the components they use; they never reach into the ' +
        'composition root (src/host).',
      severity: 'error',
      from: { path: '^src/(delivery|discovery|agents|authz|routing)/' },
      to: { path: '^src/host/' }
    },
    {
      name: 'control-imports-host',
      comment: 'The control contract is shared by faces and the daemon; it must not ' +
        'depend on the daemon.',
      severity: 'error',
      from: { path: '^src/control/' },
      to: { path: '^src/host/' }
    },
    {
      name: 'no-cycle',
      comment: 'No import cycles, type-only imports included.',
      severity: 'error',
      from: {},
      to: { circular: true }
    },
    {
      name: 'unresolvable-import',
      comment: 'Every relative import resolves to a file; an unresolved one would hide its ' +
        'edge from every rule above.',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true }
    }
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.d.ts', '.json']
    },
    reporterOptions: {
      text: { highlightFocused: true }
    }
  }
}
