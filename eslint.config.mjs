import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The raft core and the state machine must be deterministic: time and randomness come from their callers.
const deterministicRules = {
  'no-restricted-globals': ['error',
    { name: 'setTimeout', message: 'The core is driven by tick(); no timers.' },
    { name: 'setInterval', message: 'The core is driven by tick(); no timers.' },
    { name: 'setImmediate', message: 'The core is driven by tick(); no timers.' },
    { name: 'performance', message: 'No clock in deterministic code.' },
  ],
  'no-restricted-properties': ['error',
    { object: 'Math', property: 'random', message: 'Randomness is injected (Config.random).' },
    { object: 'Date', property: 'now', message: 'No clock in deterministic code.' },
    { object: 'process', property: 'hrtime', message: 'No clock in deterministic code.' },
  ],
  'no-restricted-syntax': ['error',
    { selector: "NewExpression[callee.name='Date']", message: 'No clock in deterministic code.' },
  ],
};

// The node and the client take time, timers and randomness from their ports (src/node/runtime/ports.ts,
// src/client/ports.ts), so the simulator can run them on virtual ones: only the real ports may touch the real ones.
const rawTimeOrRandom = 'Take it from the ports (src/node/runtime/ports.ts, src/client/ports.ts): the simulator runs this code on virtual time and seeded randomness.';
const portRules = {
  'no-restricted-globals': ['error',
    ...['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate', 'performance'].map((name) => ({ name, message: rawTimeOrRandom })),
  ],
  'no-restricted-properties': ['error',
    { object: 'Math', property: 'random', message: rawTimeOrRandom },
    { object: 'Date', property: 'now', message: rawTimeOrRandom },
    { object: 'performance', property: 'now', message: rawTimeOrRandom },
    { object: 'process', property: 'hrtime', message: rawTimeOrRandom },
    ...['randomBytes', 'randomUUID', 'randomInt', 'randomFillSync', 'randomFill', 'getRandomValues'].map((property) => ({ object: 'crypto', property, message: rawTimeOrRandom })),
    ...['setTimeout', 'setInterval', 'setImmediate'].map((property) => ({ object: 'globalThis', property, message: rawTimeOrRandom })),
  ],
  'no-restricted-imports': ['error', {
    paths: [
      ...['node:crypto', 'crypto'].map((name) => ({ name, importNames: ['randomBytes', 'randomUUID', 'randomInt', 'randomFillSync', 'randomFill', 'getRandomValues', 'webcrypto'], message: rawTimeOrRandom })),
      ...['node:perf_hooks', 'perf_hooks'].map((name) => ({ name, importNames: ['performance'], message: rawTimeOrRandom })),
      ...['node:timers', 'timers', 'node:timers/promises', 'timers/promises'].map((name) => ({ name, message: rawTimeOrRandom })),
    ],
  }],
  'no-restricted-syntax': ['error',
    // new Date(x) converts a time it is given; new Date() and Date() read the clock.
    { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: rawTimeOrRandom },
    { selector: "CallExpression[callee.name='Date']", message: rawTimeOrRandom },
  ],
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**', '**/*.cjs', '**/*.mjs', 'src/protocol/generated/**', 'packages/*/dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  { files: ['src/raft/**/*.ts', 'src/state/**/*.ts'], rules: deterministicRules },
  {
    files: ['src/node/**/*.ts', 'src/client/**/*.ts'],
    // The real ports: the one place each of the node and the client reads the real clock, arms real timers
    // and draws real randomness (grpc-js takes a wall-clock deadline).
    ignores: ['src/node/runtime/realPorts.ts', 'src/client/realPorts.ts', 'src/client/grpcTransport.ts'],
    rules: portRules,
  },
  // No `!` in src/: an index or lookup that must exist says so with a check (hot loops say why in a scoped
  // eslint-disable). `npm run lint` also type-checks src/ with noUncheckedIndexedAccess (tsconfig.src.json).
  { files: ['src/**/*.ts'], rules: { '@typescript-eslint/no-non-null-assertion': 'error' } },
);
