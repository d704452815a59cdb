import assert from 'node:assert/strict';
import { EventType, long, temporal, toNum } from '../src/proto';
import { RunHistory } from '../src/run/history';
import { decodeToken, encodeToken } from '../src/tokens';

const History = temporal.api.history.v1.History;

describe('embedded-temporal: run history and task tokens', () => {
  it('packs a closed history and reads it back unchanged (length, close event, every event)', () => {
    let now = Date.UTC(2026, 0, 1);
    let touched = 0;
    const h = new RunHistory(
      () => now++,
      () => touched++,
    );
    h.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
      workflowExecutionStartedEventAttributes: { workflowType: { name: 'wf' } },
    });
    h.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
      workflowTaskScheduledEventAttributes: { attempt: 1 },
    });
    h.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
      workflowExecutionCompletedEventAttributes: { result: { payloads: [{ data: Buffer.from('42') }] } },
    });
    const before = Buffer.from(History.encode({ events: h.events }).finish());
    assert.equal(touched, 3);

    h.pack();
    assert.equal(h.length, 3);
    assert.equal(h.last?.eventType, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
    assert.equal(toNum(h.last?.eventId), 3);

    const events = h.events; // unpacks
    assert.deepEqual(
      events.map((e) => toNum(e.eventId)),
      [1, 2, 3],
    );
    assert.deepEqual(Buffer.from(History.encode({ events }).finish()), before);
    assert.equal(
      Buffer.from(events[2].workflowExecutionCompletedEventAttributes?.result?.payloads?.[0].data ?? []).toString(),
      '42',
    );
  });

  it('answers histories from cached event encodings, byte-identical to encoding the events, open and packed', () => {
    let now = Date.UTC(2026, 0, 1);
    const h = new RunHistory(
      () => now++,
      () => undefined,
    );
    const Poll = temporal.api.workflowservice.v1.PollWorkflowTaskQueueResponse;
    // The same answer encoded from the event objects and from RunHistory.message().
    const expected = (from: number, to?: number): Buffer =>
      Buffer.from(Poll.encode({ taskToken: Buffer.from('t'), history: { events: h.events.slice(from, to) } }).finish());
    const actual = (from: number, to?: number): Buffer =>
      Buffer.from(Poll.encode({ taskToken: Buffer.from('t'), history: h.message(from, to) }).finish());
    h.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
      workflowExecutionStartedEventAttributes: {
        workflowType: { name: 'wf' },
        input: { payloads: [{ data: Buffer.alloc(300, 7) }] },
      },
    });
    h.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
      workflowTaskScheduledEventAttributes: { attempt: 1 },
    });
    const early = actual(0); // encodes (and caches) the first two events
    assert.deepEqual(early, expected(0));
    h.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
      workflowTaskStartedEventAttributes: { scheduledEventId: long(2), identity: 'me' },
    });
    h.append({
      eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
      workflowExecutionCompletedEventAttributes: { result: { payloads: [{ data: Buffer.from('42') }] } },
    });
    const ranges: [number, number | undefined][] = [
      [0, undefined],
      [2, undefined],
      [1, 3],
      [3, 4],
      [4, undefined],
      [9, undefined],
      [0, 0],
    ];
    const open = ranges.map(([from, to]) => expected(from, to));
    for (const [i, [from, to]] of ranges.entries()) assert.deepEqual(actual(from, to), open[i], `open ${from}..${to}`);

    h.pack();
    // Packed: full reads, pages and the close event come from the packed bytes, not unpacked objects.
    for (const [i, [from, to]] of ranges.entries())
      assert.deepEqual(actual(from, to), open[i], `packed ${from}..${to}`);
    assert.deepEqual(
      Buffer.concat(h.encodedRange(1, 3)),
      Buffer.concat([...h.encodedRange(1, 2), ...h.encodedRange(2, 3)]),
    );
    const decoded = History.decode(Buffer.concat(h.encodedRange(0, 4))).events;
    assert.deepEqual(
      decoded.map((e) => toNum(e.eventId)),
      [1, 2, 3, 4],
    );
    assert.equal(h.last?.eventType, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
  });

  it('round-trips task tokens and rejects malformed ones (the older JSON form still reads)', () => {
    const w = { t: 'w' as const, r: 'run-1', s: 7, a: 3 };
    assert.deepEqual(decodeToken(encodeToken(w)), w);
    const a = { t: 'a' as const, r: '5f0c-ü', s: 2 ** 31, a: 1 };
    assert.deepEqual(decodeToken(encodeToken(a)), a);
    assert.deepEqual(decodeToken(encodeToken({ t: 'q', q: 'query-9' })), { t: 'q', q: 'query-9' });
    assert.deepEqual(decodeToken(Buffer.from('{"t":"a","r":"old","s":1,"a":2}')), { t: 'a', r: 'old', s: 1, a: 2 });
    for (const bad of ['garbage', 'w', 'q', '{nope', '{"t":"x"}']) {
      assert.throws(() => decodeToken(Buffer.from(bad)), /Malformed task token/);
    }
    assert.throws(() => decodeToken(Buffer.alloc(0)), /not set/);
  });
});
