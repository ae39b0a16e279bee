/* global document, window, sessionStorage, fetch, TextDecoder, AbortController, URLSearchParams */
// The fencelock dashboard (docs/dashboard.md): a page per view (#/members, #/locks, #/lock/NAME, #/sessions),
// all data from the node's JSON gateway (docs/http.md) with the user's credentials: the browser's client
// certificate, or a bearer token kept in sessionStorage (never in a URL) and sent as Authorization. A lock's
// page follows Lock.Watch over fetch (EventSource cannot send Authorization); the other pages poll.
// Every text from the cluster goes in with textContent: lock names and client labels are anyone's input.

/** How often the members, locks and sessions pages are read again. */
const POLL_MS = 2000;
/** After a watch stream ends (WATCH_BEHIND, EVENTS_MISSED, a dropped connection), the lock page waits this long, re-reads and watches again. */
const REWATCH_MS = 2000;
const TOKEN_KEY = 'fencelock.token';

const state = { timer: undefined, watch: undefined, leaderSeen: undefined, leaderChanges: [], generation: 0 };

/** A DOM element: attributes (class, data-*, href, ...) and children (strings become text nodes). */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  for (const child of children.flat()) node.append(child instanceof window.Node ? child : document.createTextNode(String(child)));
  return node;
}

function authHeaders() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { Authorization: `Bearer ${token}` } : {};
}

class ApiError extends Error {
  constructor(httpStatus, body) {
    super(body.message || `HTTP ${httpStatus}`);
    this.httpStatus = httpStatus;
    this.body = body;
  }
}

/** GETs a gateway route; throws ApiError with the gateway's error body. */
async function get(route, params) {
  const query = params ? `?${new URLSearchParams(params)}` : '';
  const res = await fetch(`${route}${query}`, { headers: authHeaders(), cache: 'no-store' });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, body);
  return body;
}

function showProblem(err) {
  const problem = document.getElementById('problem');
  if (!err) {
    problem.hidden = true;
    return;
  }
  let text = err.message;
  if (err instanceof ApiError && err.body.reason === 'NOT_LEADER') text = `This node is not the leader: open the dashboard on ${err.body.leaderId || 'the leader'} (its httpListen address).`;
  else if (err instanceof ApiError && err.httpStatus === 401) text = `Not signed in: ${err.message}. Enter a bearer token, or use a client certificate.`;
  else if (err instanceof ApiError && err.httpStatus === 403) text = `Not allowed: ${err.message}`;
  problem.textContent = text;
  problem.hidden = false;
}

const seconds = (ms) => `${(Number(ms) / 1000).toFixed(1)} s`;
const clock = (date) => date.toLocaleTimeString(undefined, { hour12: false });
const holderName = (info, handle) => (info && info.clientName ? `${info.clientName} (${handle})` : handle || '');
const lockLink = (name) => el('a', { href: `#/lock/${encodeURIComponent(name)}` }, name);

function table(headings, rows, attrs) {
  return el('table', attrs, el('thead', {}, el('tr', {}, headings.map((h) => el('th', {}, h)))), el('tbody', {}, rows));
}

/** The serving node's status, and the leader changes seen since the page opened. */
async function readStatus() {
  const status = await get('/v1/cluster/status');
  const seen = `${status.term}/${status.leader}`;
  if (state.leaderSeen !== seen) {
    if (status.leader) state.leaderChanges.unshift({ at: new Date(), term: status.term, leader: status.leader, first: state.leaderSeen === undefined });
    state.leaderSeen = seen;
  }
  const line = document.getElementById('cluster-line');
  line.replaceChildren(
    'node ', el('b', {}, status.id), ` (${status.role}) · leader `, el('b', { id: 'leader' }, status.leader || 'none'),
    ` · term ${status.term} · commit ${status.commit} · ${status.locksHeld} locks held · ${status.sessions} sessions`,
  );
  return status;
}

async function membersPage(view) {
  const status = await readStatus();
  const lagOf = (done) => String(BigInt(status.commit) > BigInt(done) ? BigInt(status.commit) - BigInt(done) : 0n);
  const rows = [el('tr', { 'data-member': status.id }, el('td', {}, status.id), el('td', { class: 'role' }, status.role), el('td', {}, status.term), el('td', {}, status.applied), el('td', {}, lagOf(status.applied)))];
  for (const peer of status.peers) {
    const role = peer.learner ? 'learner' : peer.id === status.leader ? 'leader' : 'follower';
    rows.push(el('tr', { 'data-member': peer.id }, el('td', {}, peer.id), el('td', { class: 'role' }, role), el('td', {}, status.term), el('td', {}, peer.match), el('td', {}, lagOf(peer.match))));
  }
  const note = status.role === 'leader' ? 'Per member: the entries it has (applied here; acknowledged for the others) and how far that is behind the commit index.' : `This node is a ${status.role}: only the leader (${status.leader || 'none known'}) knows how far each member is; its own row is shown.`;
  const changes = state.leaderChanges.map((c) => el('li', {}, `${clock(c.at)}: term ${c.term}, leader ${c.leader}${c.first ? ' (when the page opened)' : ''}`));
  view.replaceChildren(
    el('h2', {}, 'Members'),
    table(['member', 'role', 'term', 'has entries up to', 'lag (entries)'], rows, { id: 'members' }),
    el('p', { class: 'note' }, note),
    el('h3', {}, 'Leader changes seen'),
    el('ul', { id: 'leader-changes' }, changes),
  );
}

async function locksPage(view) {
  await readStatus();
  const answer = await get('/v1/locks', { limit: '1000' });
  const rows = answer.locks.map((lock) =>
    el('tr', { 'data-lock': lock.name },
      el('td', {}, lockLink(lock.name)),
      el('td', { class: 'holder' }, lock.held ? holderName(lock.holder, lock.holderSession) : 'free'),
      el('td', { class: 'token' }, lock.held ? lock.token : ''),
      el('td', {}, lock.held ? seconds(lock.heldForMs) : ''),
      el('td', { class: 'waiters' }, lock.waiters.map((w) => `${w.session} (${seconds(w.waitingMs)})`).join(', ') || '—'),
    ));
  view.replaceChildren(
    el('h2', {}, 'Held locks'),
    table(['lock', 'holder', 'token', 'held for', 'waiters (waiting for)'], rows, { id: 'locks' }),
    el('p', { class: 'note' }, answer.locks.length === 0 ? 'No lock is held (of those you may see).' : `${answer.locks.length} held${answer.more ? '; more not shown' : ''}. Only the locks you have the lock permission on are listed.`),
  );
}

async function sessionsPage(view) {
  await readStatus();
  const answer = await get('/v1/sessions', { limit: '1000' });
  const rows = answer.sessions.map((s) =>
    el('tr', { 'data-session': s.handle },
      el('td', {}, s.handle), el('td', {}, s.identity), el('td', {}, s.clientName),
      el('td', {}, s.locks.map((name) => lockLink(name))), el('td', {}, s.waiting.join(', ')),
      el('td', {}, seconds(s.ageMs)), el('td', {}, seconds(s.ttlMs)),
    ));
  view.replaceChildren(el('h2', {}, 'Sessions'), table(['handle', 'identity', 'client', 'holds', 'waits for', 'age', 'ttl'], rows, { id: 'sessions' }), el('p', { class: 'note' }, answer.more ? 'More sessions not shown.' : ''));
}

/** One lock: its state now, and the grants seen on its event stream since the page opened. */
function lockPage(view, name) {
  const grants = [];
  const summary = el('div', { id: 'lock-state' });
  const timeline = el('tbody', {});
  const stream = el('span', { id: 'stream-state' }, 'connecting');
  view.replaceChildren(
    el('h2', {}, 'Lock ', el('code', { id: 'lock-name' }, name)),
    summary,
    el('h3', {}, 'Token timeline ', el('small', {}, '(event stream: ', stream, ')')),
    el('table', { id: 'timeline' }, el('thead', {}, el('tr', {}, ['token', 'holder', 'granted', 'ended', 'held', ''].map((h) => el('th', {}, h)))), timeline),
    el('p', { class: 'note' }, 'Grants since this page opened. A stale writer\'s refusal is not on the event stream (a refusal writes no log entry): once a grant ends, every fenced write with its token is refused (STALE_TOKEN), which the timeline marks as fenced.'),
  );
  const describe = async () => {
    const d = await get('/v1/locks/describe', { lock: name });
    const waiters = (d.waiterSessions || []).map((w) => holderName(w, w.handle)).join(', ') || '—';
    summary.replaceChildren(
      el('p', {}, d.held ? ['held by ', el('b', { id: 'holder' }, holderName(d.holder, d.holderSession)), ' with token ', el('b', { id: 'current-token' }, d.token)] : el('b', { id: 'holder' }, 'free'), ` · latest token ${d.latestToken}`),
      el('p', {}, `waiters: ${waiters}`),
    );
    return d;
  };
  // The grant current when the page opened (or the stream was re-opened) starts the timeline.
  const seed = (d) => {
    if (!d.held || grants.some((g) => g.token === d.token)) return;
    grants.push({ token: d.token, holder: holderName(d.holder, d.holderSession), at: new Date(Number(d.grantedAtMs)) });
    render();
  };
  const render = () => {
    const latest = grants.length ? grants[grants.length - 1] : undefined;
    timeline.replaceChildren(...grants.map((g) => {
      const held = (g.end ? g.end.at : new Date()) - g.at;
      const bar = el('div', { class: 'bar' });
      bar.style.width = `${Math.min(100, 2 + held / 1000)}%`;
      const fenced = g.end !== undefined || (latest && g !== latest);
      return el('tr', { 'data-token': g.token, class: fenced ? 'fenced' : 'current' },
        el('td', { class: 'token' }, g.token), el('td', {}, g.holder), el('td', {}, clock(g.at)),
        el('td', {}, g.end ? `${g.end.kind.toLowerCase()} ${clock(g.end.at)}${g.end.reason ? ` (${g.end.reason})` : ''}` : 'held'),
        el('td', {}, el('div', { class: 'track' }, bar)), el('td', { class: 'mark' }, fenced ? 'fenced: writes refused' : 'current'),
      );
    }).reverse());
  };
  const onEvent = (event) => {
    const at = new Date();
    if (event.kind === 'GRANTED') grants.push({ token: event.token, holder: holderName(event.holder, event.sessionId), at });
    else {
      const grant = grants.find((g) => g.token === event.token && !g.end);
      if (grant) grant.end = { kind: event.kind, at, reason: event.reason };
      else grants.push({ token: event.token, holder: event.sessionId, at, end: { kind: event.kind, at, reason: event.reason } });
    }
    render();
    describe().catch(showProblem);
  };
  const generation = state.generation;
  const follow = async () => {
    if (generation !== state.generation) return;
    try {
      seed(await describe());
      showProblem(undefined);
      await watchLock(name, onEvent, (text) => (stream.textContent = text));
    } catch (err) {
      if (generation === state.generation) showProblem(err);
    }
    if (generation !== state.generation) return;
    stream.textContent = 'reconnecting';
    state.timer = window.setTimeout(follow, REWATCH_MS);
  };
  follow();
}

/** Follows Lock.Watch for `name` (server-sent events over fetch) until the stream ends or the page leaves. */
async function watchLock(name, onEvent, onState) {
  const abort = new AbortController();
  state.watch = abort;
  const res = await fetch(`/v1/locks/watch?${new URLSearchParams({ lock: name })}`, { headers: { ...authHeaders(), Accept: 'text/event-stream' }, signal: abort.signal, cache: 'no-store' });
  if (!res.ok) throw new ApiError(res.status, await res.json().catch(() => ({})));
  onState('live');
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const kind = (block.match(/^event: (.*)$/m) || [])[1];
      const data = block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('');
      if (kind === 'lock') onEvent(JSON.parse(data));
      if (kind === 'error') throw new ApiError(200, JSON.parse(data));
    }
  }
}

function stopPage() {
  state.generation += 1;
  window.clearTimeout(state.timer);
  if (state.watch) state.watch.abort();
  state.watch = undefined;
}

/** Shows the page the location's hash names, and keeps it current. */
function route() {
  stopPage();
  const view = document.getElementById('view');
  const hash = window.location.hash || '#/members';
  const lock = hash.match(/^#\/lock\/(.+)$/);
  const page = lock ? 'locks' : hash.slice(2);
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.dataset.page === page);
  if (lock) {
    lockPage(view, decodeURIComponent(lock[1]));
    return;
  }
  const pages = { members: membersPage, locks: locksPage, sessions: sessionsPage };
  const render = pages[page] || membersPage;
  const generation = state.generation;
  const tick = async () => {
    try {
      await render(view);
      showProblem(undefined);
    } catch (err) {
      showProblem(err);
    }
    if (generation === state.generation) state.timer = window.setTimeout(tick, POLL_MS);
  };
  tick();
}

async function showIdentity() {
  const who = document.getElementById('whoami');
  try {
    const me = await get('/v1/auth/whoami');
    who.textContent = !me.authEnabled ? 'auth off' : me.identity ? `${me.identity} (${me.via})` : 'not signed in';
  } catch (err) {
    who.textContent = `whoami: ${err.message}`;
  }
}

function setUp() {
  document.getElementById('poll-period').textContent = String(POLL_MS / 1000);
  document.getElementById('login').addEventListener('submit', (e) => {
    e.preventDefault();
    const input = document.getElementById('token');
    if (input.value) sessionStorage.setItem(TOKEN_KEY, input.value.trim());
    input.value = '';
    showIdentity();
    route();
  });
  document.getElementById('forget-token').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    showIdentity();
    route();
  });
  window.addEventListener('hashchange', route);
  showIdentity();
  route();
}

setUp();
