// Imported (for its side effect) before anything that loads testcontainers: the settings this machine needs
// (see docs/containers.md#testcontainers). The reaper image cannot be pulled, so Ryuk is off and every test removes what it
// starts; the machine looks like a container to testcontainers, so the host is pinned to 127.0.0.1.
// The vitest 'chaos' project sets the same variables; this covers compiled scripts (cleanup CLI) too.
process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
process.env.TESTCONTAINERS_HOST_OVERRIDE ??= '127.0.0.1';

export {};
