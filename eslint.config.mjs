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
  // No `!` in src/: an index or lookup that must exist says so with a check (hot loops say why in a scoped
  // eslint-disable). `npm run lint` also type-checks src/ with noUncheckedIndexedAccess (tsconfig.src.json).
  { files: ['src/**/*.ts'], rules: { '@typescript-eslint/no-non-null-assertion': 'error' } },
);
