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
    { name: 'no-circular', severity: 'error', from: {}, to: { circular: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
