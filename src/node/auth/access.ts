// The node's side of authorization (docs/auth.md): who a call is, whether auth is required, and the
// checks made before proposing or reading. The state machine checks mutations again when it applies them.
import * as grpc from '@grpc/grpc-js';
import type { LockStateMachine, Permission } from '../../state';
import { ApiError, reasonMetadata } from '../api/errors';
import type { NodeConfig } from '../config';
import { credentialsOf, identify, NO_CALLER, UnknownTokenError, type Caller, type IdentifiableCall } from './caller';

export class Access {
  constructor(
    private readonly config: NodeConfig,
    private readonly machine: () => LockStateMachine,
    /** The error that sends a caller to the leader, when this node does not lead (undefined: it leads). */
    private readonly elsewhere: () => ApiError | undefined = () => undefined,
  ) {}

  /** Auth is required once this node's config asks for it or the replicated state has it on. */
  required(): boolean {
    return this.config.auth.enabled || this.machine().auth.authEnabled();
  }

  /**
   * The caller of `call`. With auth required, a call without an identity fails UNAUTHENTICATED, unless
   * `optional` (WhoAmI). Bad credentials fail UNAUTHENTICATED always: a wrong token is never ignored.
   */
  callerOf(call: IdentifiableCall, optional = false): Caller {
    const caller = this.identifyHere(call);
    if (caller.via !== 'address' || optional || !this.required()) return caller;
    throw new ApiError(
      grpc.status.UNAUTHENTICATED,
      'auth is on: present a client certificate naming you (urn:fencelock:client:NAME) or a bearer token (--auth-token-file / FENCELOCK_AUTH_TOKEN in the CLI, { token } in the library)',
    );
  }

  /**
   * A token this node does not know may have been issued a moment ago (the leader answers an issue once it
   * has applied it; a follower may not have yet): a follower sends the caller to the leader rather than
   * refusing it.
   */
  private identifyHere(call: IdentifiableCall): Caller {
    try {
      return identify(credentialsOf(call), (id) => this.machine().auth.tokenRecord(id));
    } catch (err) {
      throw (err instanceof UnknownTokenError ? this.elsewhere() : undefined) ?? err;
    }
  }

  /** The fields that carry the caller into a command. */
  stamp(caller: Caller | undefined): { caller?: string; callerToken?: string } {
    const c = caller ?? NO_CALLER;
    return c.tokenId === undefined ? { caller: c.identity } : { caller: c.identity, callerToken: c.tokenId };
  }

  /** PERMISSION_DENIED unless `caller` may `permission` on `name` (always allowed with auth off). */
  permit(caller: Caller | undefined, permission: Permission, name: string): void {
    const identity = this.checkedIdentity(caller);
    if (identity === undefined) return;
    if (this.machine().auth.authorize(identity, permission, name)) return;
    throw denied(`${describe(identity)} may not ${permission} ${JSON.stringify(name)}: no role of it has a ${permission} rule whose prefix matches; an admin grants one with \`fencelock auth grant ROLE ${permission} PREFIX\``);
  }

  /** Whether `caller` may `permission` on `name` (always with auth off): for what a refusal may tell it. */
  may(caller: Caller | undefined, permission: Permission, name: string): boolean {
    const identity = this.checkedIdentity(caller);
    return identity === undefined || this.machine().auth.authorize(identity, permission, name);
  }

  /** List needs a read rule covering the whole listed prefix. */
  permitList(caller: Caller | undefined, prefix: string): void {
    const identity = this.checkedIdentity(caller);
    if (identity === undefined) return;
    if (this.machine().auth.authorizeListPrefix(identity, prefix)) return;
    throw denied(`${describe(identity)} may not list keys under ${JSON.stringify(prefix)}: that needs a read rule whose prefix is a prefix of it`);
  }

  /** A known user (Cluster.Status and the like). */
  permitUser(caller: Caller | undefined): void {
    const identity = this.checkedIdentity(caller);
    if (identity === undefined) return;
    if (this.machine().auth.userInfo(identity) === undefined) throw denied(`${describe(identity)} is not a user; an admin adds it with \`fencelock auth user add ${identity}\``);
  }

  permitAdmin(caller: Caller | undefined): void {
    const identity = this.checkedIdentity(caller);
    if (identity === undefined) return;
    if (!this.machine().auth.isAdmin(identity)) throw denied(`${describe(identity)} is not an admin: auth changes need a role with the admin permission`);
  }

  /** With auth on, only the identity that opened a session may use it (keepalives too). */
  permitSession(caller: Caller | undefined, sessionId: string): void {
    const owner = this.machine().auth.sessionOwner(sessionId);
    if (owner === undefined) return; // unknown sessions get their own answer
    const identity = this.checkedIdentity(caller);
    if (identity !== undefined && owner !== identity) throw new ApiError(grpc.status.PERMISSION_DENIED, `${describe(identity)} did not open this session; only its owner may use it`, reasonMetadata('NOT_SESSION_OWNER'));
  }

  /**
   * Whether calls are checked: auth is on in the replicated state. A node whose config turns auth on
   * answers UNAVAILABLE until the entry that does it is applied, so nothing slips in unchecked meanwhile
   * (an admin made by an anonymous caller, say).
   */
  private checking(): boolean {
    if (this.machine().auth.authEnabled()) return true;
    if (!this.config.auth.enabled) return false;
    throw new ApiError(grpc.status.UNAVAILABLE, 'auth is being turned on (the leader proposes it once elected); retry in a moment');
  }

  /** The identity to check `caller` as; undefined when nothing is checked (auth off). */
  private checkedIdentity(caller: Caller | undefined): string | undefined {
    return this.checking() ? this.require(caller) : undefined;
  }

  /**
   * The caller's identity as of the state applied now: a caller identified once (a stream, a call waiting
   * for its read) whose token was revoked since is refused, not judged by what it was (docs/auth.md
   * "Revocation").
   */
  private require(caller: Caller | undefined): string {
    if (caller === undefined || caller.via === 'address' || caller.via === 'none') {
      throw new ApiError(grpc.status.UNAUTHENTICATED, 'auth is on: this call carries no identity');
    }
    const revoked = this.tokenRevoked(caller);
    if (revoked !== undefined) throw revoked;
    return caller.identity;
  }

  private tokenRevoked(caller: Caller): ApiError | undefined {
    if (caller.tokenId === undefined || this.machine().auth.tokenRecord(caller.tokenId)?.user === caller.identity) return undefined;
    return new ApiError(grpc.status.UNAUTHENTICATED, `token ${caller.tokenId} was revoked (or its user deleted) after this stream or call began; ask an admin for a new one (fencelock auth token issue USER)`);
  }

  /**
   * What a caller identified earlier has lost, as of the state applied now: its token revoked, or (`wasUser`:
   * it was a user then) its user deleted: UNAUTHENTICATED. Undefined while it stands, and with auth off.
   */
  lost(caller: Caller, wasUser: boolean): ApiError | undefined {
    if (!this.machine().auth.authEnabled() || caller.via === 'address' || caller.via === 'none') return undefined;
    const revoked = this.tokenRevoked(caller);
    if (revoked !== undefined) return revoked;
    if (wasUser && !this.isUser(caller)) return new ApiError(grpc.status.UNAUTHENTICATED, `user ${JSON.stringify(caller.identity)} was deleted; its sessions ended`);
    return undefined;
  }

  /** Whether `caller` names a user of the auth table now. */
  isUser(caller: Caller): boolean {
    return this.machine().auth.userInfo(caller.identity) !== undefined;
  }
}

const describe = (identity: string): string => `identity ${JSON.stringify(identity)}`;

const denied = (why: string): ApiError => new ApiError(grpc.status.PERMISSION_DENIED, why, reasonMetadata('PERMISSION_DENIED'));
