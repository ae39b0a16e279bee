// The gateway's routes (docs/http.md "Routes"): each names the served gRPC method it calls. Reads are GETs
// with their request in the query string (a browser page can fetch them); everything else is a POST with a
// JSON body. Lock names and keys contain '/', so they travel as parameters, never in the path.

/** How a route drives its method: one unary call, one renewal on a KeepAlive stream, or a Watch as SSE. */
export type RouteKind = 'unary' | 'renewal' | 'events';

export interface Route {
  verb: 'GET' | 'POST';
  path: string;
  rpc: string;
  kind: RouteKind;
}

const post = (path: string, rpc: string, kind: RouteKind = 'unary'): Route => ({ verb: 'POST', path, rpc: `/fencelock.v1.${rpc}`, kind });
const get = (path: string, rpc: string, kind: RouteKind = 'unary'): Route => ({ verb: 'GET', path, rpc: `/fencelock.v1.${rpc}`, kind });

export const ROUTES: readonly Route[] = [
  post('/v1/sessions/open', 'Session/Open'),
  post('/v1/sessions/keepalive', 'Session/KeepAlive', 'renewal'),
  post('/v1/sessions/close', 'Session/Close'),
  get('/v1/sessions', 'Session/List'),
  post('/v1/locks/acquire', 'Lock/Acquire'),
  post('/v1/locks/acquire-all', 'Lock/AcquireAll'),
  post('/v1/locks/release', 'Lock/Release'),
  post('/v1/locks/revoke', 'Lock/Revoke'),
  get('/v1/locks', 'Lock/List'),
  get('/v1/locks/describe', 'Lock/Describe'),
  get('/v1/locks/watch', 'Lock/Watch', 'events'),
  post('/v1/semaphores/acquire', 'Semaphore/Acquire'),
  post('/v1/semaphores/release', 'Semaphore/Release'),
  get('/v1/semaphores/describe', 'Semaphore/Describe'),
  post('/v1/kv/write', 'KV/Write'),
  get('/v1/kv/get', 'KV/Get'),
  get('/v1/kv', 'KV/List'),
  get('/v1/cluster/status', 'Cluster/Status'),
  get('/v1/cluster/members', 'Cluster/MemberList'),
  get('/v1/auth/whoami', 'Auth/WhoAmI'),
];

/** The route for a path and verb; `allowed` lists the verbs the path takes when the verb is wrong. */
export function routeOf(verb: string, path: string): { route?: Route; allowed: string[] } {
  const matching = ROUTES.filter((r) => r.path === path);
  return { route: matching.find((r) => r.verb === verb), allowed: matching.map((r) => r.verb) };
}
