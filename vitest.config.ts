import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/{raft,support,nodesim,state,storage,transport,checker,client,node,certs}/**/*.test.ts'],
          testTimeout: 120_000,
        },
      },
      {
        // The repository's own documentation checked against the code: references to docs/*.md, the README
        // against `fencelock --help`, the README's gRPC examples against a real cluster: one file at a time.
        test: {
          name: 'docs',
          include: ['test/docs/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 60_000,
        },
      },
      {
        // Real processes on fixed loopback ports: one file at a time.
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Attacks on the trust boundary and TLS checks, over real node processes on loopback: one file at a time.
        test: {
          name: 'security',
          include: ['test/security/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The README's promises (limits, what a follower serves, ...) through generated stubs over real
        // node processes: one file at a time.
        test: {
          name: 'contract',
          include: ['test/contract/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Property tests on the wire: every RPC of lock.proto with seeded edge values through a raw gRPC client,
        // each answer field against the proto and docs/limits.md, over a real TLS node with auth on
        // (WIRE_SEED=N replays a run). Real processes: one file at a time.
        test: {
          name: 'wire',
          include: ['test/wire/**/*.test.ts'],
          fileParallelism: false,
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        // The side-by-side benchmark, briefly: local fencelock and etcd clusters and a ZooKeeper ensemble. The
        // global setup installs Debian's etcd-server and zookeeper when missing. Runs its processes on loopback like the integration tests.
        test: {
          name: 'bench',
          include: ['test/bench/**/*.test.ts'],
          globalSetup: ['test/bench/globalSetup.ts'],
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Fencing downstream resources (src/fencing): every rule against PGlite and real PostgreSQL, MariaDB and
        // Redis servers, which the global setup starts (installing Debian's postgresql, mariadb-server and
        // redis-server when missing); real fencelock clusters for the concurrency tests. One file at a time.
        test: {
          name: 'fencing',
          include: ['test/fencing/**/*.test.ts'],
          globalSetup: ['test/fencing/globalSetup.ts'],
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The web dashboard in headless Chromium (puppeteer-core; the global setup installs Debian's chromium
        // when missing) against real clusters on loopback: one file at a time.
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          globalSetup: ['test/browser/globalSetup.ts'],
          fileParallelism: false,
          testTimeout: 180_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Containers (Docker, testcontainers): one file at a time. The global setup installs/starts Docker
        // when needed and builds the local image; see test/chaos/containerCluster.ts.
        test: {
          name: 'chaos',
          include: ['test/chaos/**/*.test.ts'],
          globalSetup: ['test/chaos/globalSetup.ts'],
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 120_000,
          env: {
            TESTCONTAINERS_RYUK_DISABLED: 'true',
            TESTCONTAINERS_HOST_OVERRIDE: '127.0.0.1',
          },
        },
      },
    ],
  },
});
