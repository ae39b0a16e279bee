// A node removed while it was away learns it from any member it reaches (src/transport/removalNotice.ts):
// on a new stream, and on a stream opened while it was still a member. Two real transports on loopback.
import { afterEach, describe, expect, it } from 'vitest';
import { appMsg, loopbackNodes, sleep, waitFor } from './helpers';

const { node, stopAll } = loopbackNodes();

afterEach(stopAll);

describe('a removed node is told so by a member', () => {
  it('on a new stream: the member refuses it with the notice, and the node hears it once, naming the member', async () => {
    const { n: member, addr: memberAddr } = await node('n1');
    const { n: removed, addr: removedAddr } = await node('n3');
    const tm = member.start({ n3: removedAddr });
    tm.answerRemovedMembers((id) => id === 'n3');
    const tr = removed.start({ n1: memberAddr });
    const heard: string[] = [];
    tr.onRemoved((by) => heard.push(by));

    tr.send([appMsg('n3', 'n1', 1)]);
    await waitFor('the removal notice', () => heard.length > 0);
    tr.send([appMsg('n3', 'n1', 2)]);
    await sleep(300); // it redials after its backoff and is refused again
    expect(heard).toEqual(['n1']);
    expect(member.received, 'nothing from a removed node is delivered').toEqual([]);
    expect(member.logger.lines.some((l) => l.msg.includes('telling it that it was removed'))).toBe(true);
  });

  it('on a stream opened while it was a member: its next message after the member stops dialling it', async () => {
    const { n: member, addr: memberAddr } = await node('n1');
    const { n: removed, addr: removedAddr } = await node('n3');
    const tm = member.start({ n3: removedAddr });
    let removedNow = false;
    tm.answerRemovedMembers((id) => removedNow && id === 'n3');
    const tr = removed.start({ n1: memberAddr });
    const heard: string[] = [];
    tr.onRemoved((by) => heard.push(by));

    tr.send([appMsg('n3', 'n1', 1)]);
    await waitFor('a member hears it', () => member.received.length === 1);
    // The configuration removes n3 and commits; the member stops dialling it (its linger ended).
    removedNow = true;
    tm.setPeers({});
    tr.send([appMsg('n3', 'n1', 2)]);
    await waitFor('the removal notice on the open stream', () => heard.length > 0);
    expect(heard).toEqual(['n1']);
    expect(member.received.map((m) => m.index), 'the message after the removal is not delivered').toEqual([1]);
  });

  it('a member that still dials the node (its removal is lingering or not committed) says nothing', async () => {
    const { n: member, addr: memberAddr } = await node('n1');
    const { n: other, addr: otherAddr } = await node('n3');
    const tm = member.start({ n3: otherAddr });
    tm.answerRemovedMembers(() => false);
    const to = other.start({ n1: memberAddr });
    const heard: string[] = [];
    to.onRemoved((by) => heard.push(by));
    to.send([appMsg('n3', 'n1', 1)]);
    await waitFor('delivered', () => member.received.length === 1);
    await sleep(200);
    expect(heard).toEqual([]);
  });
});
