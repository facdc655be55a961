// The layering `npm run lint` enforces (docs/architecture.md, Folders): no import cycles; src/api
// imports nothing of ours; src/policy (pure) nothing of daemon, config or cli; one folder reaches
// another only through its index.ts (src/api's non-public helpers through internal.ts).
// A cycle is any: a type-only import back is erased at build, but it still ties two files into
// one unit a reader must hold at once, so shared types live in the lower file (or a leaf of types).
// src/daemon's rooms, lowest first (src/daemon/README.md): a room imports only the rooms below it.
const DAEMON_ROOMS = ['model', 'lifecycle', 'store', 'sources', 'lanes', 'work', 'outcomes', 'views', 'runtime'];
const roomOrder = DAEMON_ROOMS.slice(0, -1).map((room, i) => ({
  name: `daemon-${room}-imports-only-lower-rooms`,
  severity: 'error',
  comment: `src/daemon/${room} imports only the rooms below it (${DAEMON_ROOMS.slice(0, i).join(', ') || 'none'}).`,
  from: { path: `^src/daemon/${room}/` },
  to: { path: `^src/daemon/(${DAEMON_ROOMS.slice(i + 1).join('|')})/` },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...roomOrder,
    {
      name: 'daemon-files-in-rooms',
      severity: 'error',
      comment: 'A file of src/daemon lives in one of its rooms; only index.ts, the public surface, stands at the top.',
      from: { path: '^src/daemon/[^/]+[.]ts$', pathNot: '^src/daemon/index[.]ts$' },
      to: {},
    },
    {
      name: 'daemon-rooms-do-not-import-the-index',
      severity: 'error',
      comment: "src/daemon/index.ts is the daemon's public surface for other folders; its rooms import each other.",
      from: { path: '^src/daemon/[^/]+/' },
      to: { path: '^src/daemon/index[.]ts$' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Modules of src import each other in a cycle.',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'api-imports-nothing-of-ours',
      severity: 'error',
      comment: 'src/api is the published client: it stands alone.',
      from: { path: '^src/api/' },
      to: { path: '^src/', pathNot: '^src/api/' },
    },
    {
      name: 'policy-is-pure',
      severity: 'error',
      comment: 'src/policy is pure: it imports nothing of the daemon, the config loader or the CLI.',
      from: { path: '^src/policy/' },
      to: { path: '^src/(daemon|config|cli)/' },
    },
    {
      name: 'folders-through-index',
      severity: 'error',
      comment: "Another folder is reached through its index.ts (src/api's helpers: internal.ts).",
      from: { path: '^src/([^/]+)/' },
      to: {
        path: '^src/([^/]+)/',
        pathNot: ['^src/$1/', '^src/[^/]+/index[.]ts$', '^src/api/internal[.]ts$'],
      },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
