/** Architecture rules: arrows point down (see docs/architecture.md#layout). */
module.exports = {
  forbidden: [
    {
      name: 'deterministic-core-stays-pure',
      comment: 'src/raft and src/state are deterministic: no gRPC, LevelDB, metrics, timers, clocks, sockets or files.',
      severity: 'error',
      from: { path: '^src/(raft|state)/' },
      to: {
        path: [
          'node_modules/(@grpc|level|classic-level|pino|protobufjs|prom-client)',
          '^(fs|net|http2|timers|child_process|worker_threads|crypto|perf_hooks|os)$',
          '^node:',
          '^src/(node|storage|transport|client|cli)/',
        ],
      },
    },
    {
      name: 'raft-knows-no-locks',
      severity: 'error',
      from: { path: '^src/raft/' },
      to: { path: '^src/state/' },
    },
    {
      name: 'lower-layers-do-not-import-node-or-cli',
      severity: 'error',
      from: { path: '^src/(storage|transport|state|raft)/' },
      to: { path: '^src/(node|client|cli)/' },
    },
    {
      name: 'client-does-not-import-server',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/(node|storage|transport|raft|state)/' },
    },
    {
      name: 'client-is-self-contained',
      comment: 'The client package (packages/client) ships src/client and src/protocol only: nothing else of src/.',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: '^src/(client|protocol)/' },
    },
    {
      name: 'client-uses-only-grpc-packages',
      comment: 'The client package depends on @grpc/grpc-js, @grpc/proto-loader and @opentelemetry/api (a no-op until an app registers an SDK) alone (no LevelDB, pino, SDK, ...).',
      severity: 'error',
      from: { path: '^src/(client|protocol)/' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'], pathNot: 'node_modules/(@grpc/(grpc-js|proto-loader)|@opentelemetry/api)/' },
    },
    {
      name: 'protocol-is-a-leaf',
      comment: 'src/protocol is what client and server share: it imports nothing of either.',
      severity: 'error',
      from: { path: '^src/protocol/' },
      to: { path: '^src/', pathNot: '^src/protocol/' },
    },
    {
      name: 'cli-uses-client-not-internals',
      severity: 'error',
      from: { path: '^src/cli/' },
      to: { path: '^src/(storage|transport|raft|state)/' },
    },
    {
      name: 'fencing-is-downstream-only',
      comment: 'src/fencing runs inside the users\' own services: pg types, node http and fs, the client helpers; nothing of the server.',
      severity: 'error',
      from: { path: '^src/fencing/' },
      to: { path: '^src/(node|state|raft|storage|transport|cli)/' },
    },
    {
      name: 'fencing-package-is-self-contained',
      comment:
        'The fencing package (packages/fencing) compiles src/fencing with the header names, the uint64 parser and the trace context names only: nothing else of src/ (see packages/fencing/tsconfig.json).',
      severity: 'error',
      from: { path: '^src/fencing/' },
      to: { path: '^src/', pathNot: '^src/(fencing/|protocol/fencingHeaders\\.ts$|protocol/traceContext\\.ts$|client/uint64\\.ts$)' },
    },
    {
      name: 'fencing-uses-only-its-packages',
      comment: 'The fencing package depends on commander (the proxy bin), @opentelemetry/api (no-op until an SDK is registered) and, as an optional peer, pg (types only: src/fencing/sql/db.ts describes it).',
      severity: 'error',
      // src/fencing/check is `fencelock check-resource`'s (the CLI's), not the package's: it drives the user's own drivers.
      from: { path: '^src/fencing/', pathNot: '^src/fencing/check/' },
      to: { dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'], pathNot: 'node_modules/(commander|@opentelemetry/api)/' },
    },
    // Generated types follow lock.proto, whose recursive messages (CallResponse.answers) import themselves.
    { name: 'no-circular', severity: 'error', from: { pathNot: '^src/protocol/generated/' }, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
