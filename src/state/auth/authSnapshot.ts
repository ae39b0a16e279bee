// The auth section of a snapshot (format 4 on; the grammar is in snapshot.ts):
//
//   auth  = byte enabled (0/1) | list(user) | list(role) | list(token)
//   user  = str name | list(str role)                  users by name, a user's roles sorted
//   role  = str name | list(rule) | list(quota)        roles by name
//   rule  = byte perm (0 lock, 1 write, 2 read, 3 admin) | str prefix     by perm, then prefix
//   quota = str name | varint value                    by name
//   token = str id | str user | str hash               tokens by id
//
// Written from an AuthImage (already sorted: the table copies itself at the capture); read back checking
// every name, the order (one canonical encoding per table) and the bounds. That references resolve (a
// user's roles, a token's user) is the table's own check, run with checkInvariants after the restore.
import * as L from '../limits';
import { Reader, SnapshotError, Writer } from '../snapshotWire';
import { compareStrings, isWellFormed, utf8ByteLength } from '../text';
import { compareRules, type AuthImage, type AuthTable, type Rule } from './authTable';
import { PERMISSIONS, isCaller, isQuotaName, isRoleName, isTokenHash, isTokenId, isUserName } from './names';

export function writeAuth(w: Writer, a: AuthImage): void {
  w.byte(a.enabled ? 1 : 0);
  w.varint(a.users.length);
  for (const u of a.users) {
    w.str(u.name);
    w.varint(u.roles.length);
    for (const role of u.roles) w.str(role);
  }
  w.varint(a.roles.length);
  for (const r of a.roles) {
    w.str(r.name);
    w.varint(r.rules.length);
    for (const rule of r.rules) {
      w.byte(PERMISSIONS.indexOf(rule.perm));
      w.str(rule.prefix);
    }
    w.varint(r.quotas.length);
    for (const [name, value] of r.quotas) {
      w.str(name);
      w.varint(value);
    }
  }
  w.varint(a.tokens.length);
  for (const t of a.tokens) {
    w.str(t.id);
    w.str(t.user);
    w.str(t.hash);
  }
}

function bad(message: string): never {
  throw new SnapshotError(message);
}

/** Reads a list of strings, each valid by `valid`, in strictly increasing order. */
function sortedNames(r: Reader, what: string, max: number, valid: (s: string) => boolean): string[] {
  const n = r.count(2);
  if (n > max) bad(`too many ${what}`);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const s = r.str();
    if (!valid(s)) bad(`a bad ${what} name`);
    if (i > 0 && compareStrings(out[i - 1] as string, s) >= 0) bad(`${what} out of order`);
    out.push(s);
  }
  return out;
}

export function readAuth(r: Reader, t: AuthTable): void {
  const enabled = r.byte();
  if (enabled > 1) bad('bad auth enabled flag');
  t.enabled = enabled === 1;
  readUsers(r, t);
  readRoles(r, t);
  readTokens(r, t);
}

function readUsers(r: Reader, t: AuthTable): void {
  const n = r.count(2);
  if (n > L.MAX_USERS) bad('too many users');
  let previous = '';
  for (let i = 0; i < n; i++) {
    const name = r.str();
    if (!isUserName(name)) bad('a bad user name');
    if (i > 0 && compareStrings(previous, name) >= 0) bad(`user ${name} out of order`);
    t.addUser(name).roles = sortedNames(r, 'role', L.MAX_ROLES_PER_USER, isRoleName);
    previous = name;
  }
}

function readRoles(r: Reader, t: AuthTable): void {
  const n = r.count(3);
  if (n > L.MAX_ROLES) bad('too many roles');
  let previous = '';
  for (let i = 0; i < n; i++) {
    const name = r.str();
    if (!isRoleName(name)) bad('a bad role name');
    if (i > 0 && compareStrings(previous, name) >= 0) bad(`role ${name} out of order`);
    const role = t.addRole(name);
    role.rules = readRules(r);
    readQuotas(r, role.quotas);
    previous = name;
  }
}

function readRules(r: Reader): Rule[] {
  const n = r.count(2);
  if (n > L.MAX_RULES_PER_ROLE) bad('too many rules');
  const rules: Rule[] = [];
  for (let i = 0; i < n; i++) {
    const perm = PERMISSIONS[r.byte()] ?? bad('unknown permission');
    const prefix = r.str();
    if (!isWellFormed(prefix) || utf8ByteLength(prefix) > L.MAX_RULE_PREFIX_BYTES) bad('a bad rule prefix');
    if (perm === 'admin' && prefix !== '') bad('an admin rule with a prefix');
    const rule = { perm, prefix };
    if (i > 0 && compareRules(rules[i - 1] as Rule, rule) >= 0) bad('rules out of order');
    rules.push(rule);
  }
  return rules;
}

function readQuotas(r: Reader, quotas: Map<string, number>): void {
  const n = r.count(2);
  let previous = '';
  for (let i = 0; i < n; i++) {
    const name = r.str();
    if (!isQuotaName(name)) bad('unknown quota');
    if (i > 0 && compareStrings(previous, name) >= 0) bad('quotas out of order');
    const value = r.varint();
    if (value > L.MAX_QUOTA_VALUE) bad('a quota above its bound');
    quotas.set(name, value);
    previous = name;
  }
}

function readTokens(r: Reader, t: AuthTable): void {
  const n = r.count(3);
  if (n > L.MAX_TOKENS) bad('too many tokens');
  let previous = '';
  for (let i = 0; i < n; i++) {
    const id = r.str();
    if (!isTokenId(id)) bad('a bad token id');
    if (i > 0 && previous >= id) bad(`token ${id} out of order`); // ids are ASCII: < is code point order
    const user = t.users.get(r.str()) ?? bad(`token ${id} of an unknown user`);
    const hash = r.str();
    if (!isTokenHash(hash)) bad(`token ${id} has a bad hash`);
    t.addToken(user, id, hash);
    previous = id;
  }
}

/** A session owner or key payer: '' or a caller. */
export function readCaller(r: Reader): string {
  const s = r.str();
  return isCaller(s) ? s : bad('a bad caller');
}
