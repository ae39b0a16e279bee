// `fencelock member list|add|promote|remove` (docs/operations.md, "Membership changes").
import type { Command } from 'commander';
import type { FenceLockClient, MemberChange, MemberListing } from '../client';
import { EXIT, UsageError } from './exitCodes';
import { toJson, type CliIO } from './output';

type Action = <A extends unknown[]>(fn: (...args: A) => Promise<number>) => (...args: A) => Promise<void>;
type WithClient = <T>(cmd: Command, fn: (client: FenceLockClient, json: boolean) => Promise<T>) => Promise<T>;

const NODE_ID = /^[A-Za-z0-9_-]{1,32}$/;

function checkId(id: string): string {
  if (!NODE_ID.test(id)) throw new UsageError(`member: "${id}" is not a node id (1-32 letters, digits, - or _)`);
  return id;
}

/** One row per member: role, addresses, and how far behind the leader's commit it is. */
export function formatMembers(l: MemberListing): string {
  const rows = l.members.map((m) => {
    const behind = l.commit > m.match ? l.commit - m.match : 0n;
    return `${m.id.padEnd(12)} ${(m.learner ? 'learner' : 'voter').padEnd(8)} client ${m.clientAddress.padEnd(22)} peer ${m.peerAddress.padEnd(22)} match ${m.match} (${behind} behind)`;
  });
  const removed = l.removed.length > 0 ? `removed: ${l.removed.join(', ')}\n` : '';
  return `${rows.join('\n')}\ncluster id: ${l.clusterId}\n${removed}`;
}

function changeText(what: string, r: MemberChange): string {
  const head = r.index === 0n ? `${what}: already done` : `${what} (index ${r.index})`;
  return `${head}\n${formatMembers(r.members)}`;
}

export function addMemberCommands(program: Command, io: CliIO, action: Action, withClient: WithClient): void {
  const member = program
    .command('member')
    .description('list the members, add a learner, promote it, remove a member (admin only with auth on)')
    .addHelpText(
      'after',
      `
Replacing a machine: add the new node as a learner (member add), start it with \`fencelock serve --join\`
and "clusterId" set to the cluster id \`member list\` shows, wait until \`member list\` shows it caught up,
promote it, then remove the old member. One change at a time; a change already made answers as done.
A removed member's name is never given to another: name the new machine anew.`,
    );
  const run = (cmd: Command, fn: (client: FenceLockClient) => Promise<MemberChange>, what: string): Promise<number> =>
    withClient(cmd, async (client, json) => {
      const r = await fn(client);
      io.stdout(json ? `${toJson(r)}\n` : changeText(what, r));
      return EXIT.OK;
    });

  member
    .command('list')
    .description("the members, their roles and addresses, and how far each holds the leader's log")
    .action(
      action(async (_opts: unknown, cmd: Command) =>
        withClient(cmd, async (client, json) => {
          const l = await client.members.list();
          io.stdout(json ? `${toJson(l)}\n` : formatMembers(l));
          return EXIT.OK;
        }),
      ),
    );
  member
    .command('add')
    .description('add a learner: it receives the log and votes once promoted')
    .argument('<name>', 'the new node id (its certificate must name it: urn:fencelock:node:NAME)')
    .requiredOption('--peer <host:port>', 'where the other members reach its peer listener')
    .requiredOption('--client <host:port>', 'where clients reach it')
    .option('--learner', 'add it as a learner (the only way: it is promoted with `member promote` once caught up)')
    .action(
      action(async (name: string, opts: { peer: string; client: string }, cmd: Command) =>
        run(cmd, (c) => c.members.add(checkId(name), { client: opts.client, peer: opts.peer }), `added ${name} as a learner`),
      ),
    );
  member
    .command('promote')
    .description('make a caught-up learner a voter')
    .argument('<name>')
    .action(action(async (name: string, _opts: unknown, cmd: Command) => run(cmd, (c) => c.members.promote(checkId(name)), `promoted ${name}`)));
  member
    .command('remove')
    .description('remove a member (the leader hands leadership over first when it is the one removed)')
    .argument('<name>')
    .action(action(async (name: string, _opts: unknown, cmd: Command) => run(cmd, (c) => c.members.remove(checkId(name)), `removed ${name}`)));
}
