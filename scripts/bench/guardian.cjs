// The benchmark's guardian (started by ServerGuard in processes.ts, one per cluster): it makes sure the
// cluster's server processes cannot outlive the benchmark, even when the benchmark is SIGKILLed and runs no
// exit hook of its own. Its stdin is a pipe from the benchmark, which writes one line `PID STARTTIME` per
// server it spawned, and `release` once it stopped them itself. The kernel closes the pipe whenever the
// benchmark dies, however it dies; on that end of input, unless released, the guardian SIGKILLs every server
// still running and removes the cluster's data directory (argv[2]).
//
// The start time (field 22 of /proc/PID/stat) makes sure a pid is the server's: a server that exited may have
// left its pid to an unrelated process. Plain CommonJS, so that it runs the same from the sources (the tests
// import the targets' TypeScript) and from the build.
'use strict';
const fs = require('node:fs');

const dir = process.argv[2];
/** pid -> start time, of the servers to kill should the benchmark die. */
const watched = new Map();
let released = false;
let pending = '';

// The guardian acts only when the benchmark is gone. Ctrl-C and a terminal's hang-up reach the whole process
// group: the benchmark then stops its clusters itself (or dies, and the pipe says so).
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => undefined);

/** The start time of `pid`, or undefined when no such process runs (a zombie has exited). */
function startTime(pid) {
  let stat;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may contain spaces; the fields after it start at 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[0] === 'Z' ? undefined : fields[22 - 3];
}

function stillRunning() {
  return [...watched].filter(([pid, start]) => startTime(pid) === start);
}

function onLine(line) {
  if (line === 'release') {
    released = true;
    watched.clear();
    return;
  }
  const [pid, start] = line.split(' ');
  if (pid && start) watched.set(Number(pid), start);
}

async function cleanUp() {
  if (released) process.exit(0);
  for (const [pid] of stillRunning()) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // exited meanwhile
    }
  }
  // The data goes once nothing writes it any more (a dying server may still be closing files).
  const deadline = Date.now() + 10_000;
  while (stillRunning().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  fs.rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  for (let nl = pending.indexOf('\n'); nl >= 0; nl = pending.indexOf('\n')) {
    onLine(pending.slice(0, nl));
    pending = pending.slice(nl + 1);
  }
});
process.stdin.on('end', () => void cleanUp());
process.stdin.on('error', () => void cleanUp());
