/**
 * The server's own HTTP/2 framing and HPACK (src/rpc/h2connection.ts, src/rpc/hpack.ts), below
 * the gRPC layer: RFC 7541's examples, every Huffman symbol as nghttp2 (Node's HTTP/2 client)
 * encodes it, frames a client may legally split or pad, flow control against small client
 * windows, cancellation by RST_STREAM, PING, GOAWAY on close and garbage on the socket.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { temporal } from '@temporalio/proto';
import { Connection } from '@temporalio/client';
import { silentLogger, startServer, type RunningServer } from '../src/index';
import { encodeHeaderBlock, HpackDecoder, HpackError, huffmanCodes } from '../src/rpc/hpack';

const ws = temporal.api.workflowservice.v1;
const WS = '/temporal.api.workflowservice.v1.WorkflowService';

interface RawFrame {
  type: number;
  flags: number;
  id: number;
  payload: Buffer;
}

function frameBytes(type: number, flags: number, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.alloc(9);
  h.writeUIntBE(payload.length, 0, 3);
  h[3] = type;
  h[4] = flags;
  h.writeUInt32BE(id, 5);
  return Buffer.concat([h, payload]);
}

/** Splits a byte stream into frames (after the 24-byte preface when `preface`). */
function parseFrames(buf: Buffer, preface: boolean): RawFrame[] {
  const out: RawFrame[] = [];
  let off = preface ? 24 : 0;
  while (buf.length - off >= 9) {
    const len = buf.readUIntBE(off, 3);
    if (buf.length - off - 9 < len) break;
    out.push({
      type: buf[off + 3],
      flags: buf[off + 4],
      id: buf.readUInt32BE(off + 5) & 0x7fffffff,
      payload: buf.subarray(off + 9, off + 9 + len),
    });
    off += 9 + len;
  }
  return out;
}

/** A hand-driven HTTP/2 client: writes frames as given, collects the server's frames. */
class RawClient {
  private buf = Buffer.alloc(0);
  private seen = 0;
  readonly frames: RawFrame[] = [];
  readonly decoder = new HpackDecoder();
  closed = false;
  private wake: (() => void) | undefined;

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (c: Buffer) => {
      this.buf = Buffer.concat([this.buf, c]);
      const all = parseFrames(this.buf, false);
      this.frames.push(...all.slice(this.seen));
      this.seen = all.length;
      this.wake?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake?.();
    });
    socket.on('error', () => undefined);
  }

  static async connect(address: string, preface = true): Promise<RawClient> {
    const [host, port] = address.split(':');
    const socket = net.connect(Number(port), host);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const c = new RawClient(socket);
    if (preface)
      c.send(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1'), frameBytes(4, 0, 0)]));
    return c;
  }

  send(b: Buffer): void {
    this.socket.write(b);
  }

  /** Resolves with the first frame (from the start) matching `pred`, waiting for it to arrive. */
  async until(pred: (f: RawFrame) => boolean): Promise<RawFrame> {
    for (;;) {
      const f = this.frames.find(pred);
      if (f) return f;
      if (this.closed) throw new Error('connection closed before the expected frame');
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** The status and trailers of stream `id`, decoding its header blocks in arrival order. */
  async answer(id: number): Promise<{ headers: Record<string, string>[]; data: Buffer }> {
    await this.until((f) => f.id === id && (f.type === 1 || f.type === 0) && (f.flags & 1) === 1);
    const headers: Record<string, string>[] = [];
    const data: Buffer[] = [];
    for (const f of this.frames.filter((x) => x.id === id)) {
      if (f.type === 1) headers.push(this.decoder.decode(f.payload));
      if (f.type === 0) data.push(f.payload);
    }
    return { headers, data: Buffer.concat(data) };
  }

  close(): void {
    this.socket.destroy();
  }
}

function grpcBody(message: Uint8Array): Buffer {
  const b = Buffer.alloc(5 + message.length);
  b.writeUInt32BE(message.length, 1);
  Buffer.from(message).copy(b, 5);
  return b;
}

function requestBlock(method: string, extra: [string, string][] = []): Buffer {
  return encodeHeaderBlock([
    [':method', 'POST'],
    [':scheme', 'http'],
    [':path', `${WS}/${method}`],
    [':authority', 'localhost'],
    ['content-type', 'application/grpc'],
    ['te', 'trailers'],
    ...extra,
  ]);
}

describe('embedded-temporal: HPACK', () => {
  it('derives the Huffman code of RFC 7541 Appendix B from its code lengths', () => {
    const codes = huffmanCodes();
    const expect: [number, number, number][] = [
      [0, 0x1ff8, 13],
      [1, 0x7fffd8, 23],
      [10, 0x3ffffffc, 30],
      [32, 0x14, 6],
      [48, 0x0, 5],
      [97, 0x3, 5],
      [116, 0x9, 5],
      [127, 0xffffffc, 28],
      [199, 0x1ffffec, 25],
      [255, 0x3ffffee, 26],
      [256, 0x3fffffff, 30],
    ];
    for (const [sym, code, bits] of expect) assert.deepEqual(codes[sym], { code, bits }, `symbol ${sym}`);
  });

  it("decodes RFC 7541's request examples with Huffman coding (C.4), keeping the dynamic table across blocks", () => {
    const d = new HpackDecoder();
    assert.deepEqual(d.decode(Buffer.from('828684418cf1e3c2e5f23a6ba0ab90f4ff', 'hex')), {
      ':method': 'GET',
      ':scheme': 'http',
      ':path': '/',
      ':authority': 'www.example.com',
    });
    assert.deepEqual(d.decode(Buffer.from('828684be5886a8eb10649cbf', 'hex')), {
      ':method': 'GET',
      ':scheme': 'http',
      ':path': '/',
      ':authority': 'www.example.com',
      'cache-control': 'no-cache',
    });
    assert.deepEqual(d.decode(Buffer.from('828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf', 'hex')), {
      ':method': 'GET',
      ':scheme': 'https',
      ':path': '/index.html',
      ':authority': 'www.example.com',
      'custom-key': 'custom-value',
    });
  });

  it('refuses malformed blocks: an index beyond the tables, a truncated string, bad Huffman padding, a table size above ours', () => {
    for (const hex of ['ff00', '0085f1e3', '0081fe', '3fe21f']) {
      assert.throws(() => new HpackDecoder().decode(Buffer.from(hex, 'hex')), HpackError, hex);
    }
  });

  it("decodes every octet's Huffman code as Node's HTTP/2 client (nghttp2) encodes it", async () => {
    const captured: Buffer[] = [];
    const sink = net.createServer((s) => s.on('data', (c: Buffer) => captured.push(c)));
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const port = (sink.address() as net.AddressInfo).port;
    // Octets Node accepts in a header value; a run of common letters makes Huffman the shorter form.
    const octets = [
      9,
      ...Array.from({ length: 95 }, (_, i) => 32 + i),
      ...Array.from({ length: 128 }, (_, i) => 128 + i),
    ];
    const sent: Record<string, string> = {};
    for (const o of octets) sent[`x-o${o}`] = `aeiouaeiouaeiouaeiou${String.fromCharCode(o)}z`;
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => undefined);
    const req = session.request({ ':method': 'POST', ':path': '/p', ...sent });
    req.on('error', () => undefined);
    req.end();
    const blocks: Buffer[] = [];
    for (let i = 0; i < 200 && blocks.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const frames = parseFrames(Buffer.concat(captured), true);
      const headers = frames.findIndex((f) => f.type === 1);
      if (headers < 0) continue;
      // The block may continue in CONTINUATION frames up to END_HEADERS.
      for (let j = headers; j < frames.length; j++) {
        blocks.push(frames[j].payload);
        if (frames[j].flags & 4) break;
        if (j === frames.length - 1) blocks.length = 0;
      }
    }
    session.destroy();
    sink.close();
    assert.ok(blocks.length > 0, 'captured the request headers');
    const block = Buffer.concat(blocks);
    const got = new HpackDecoder(65_536).decode(block);
    for (const [k, v] of Object.entries(sent)) assert.equal(got[k], v, k);
    // The codes really were Huffman: the literal form would be longer than the block.
    const literalBytes = Object.entries(sent).reduce((n, [k, v]) => n + k.length + v.length + 3, 0);
    assert.ok(block.length < literalBytes, `block ${block.length} bytes < ${literalBytes} uncompressed`);
  });
});

describe('embedded-temporal: HTTP/2 framing', () => {
  let server: RunningServer;
  let conn: Connection;
  before(async () => {
    server = await startServer({ port: 0, logger: silentLogger });
    conn = await Connection.connect({ address: server.address });
  });
  after(async () => {
    await conn.close();
    await server.close();
  });

  /** A run whose history's first event carries `data` as its input (a large answer to read back). */
  async function startWithInput(workflowId: string, data: Buffer): Promise<void> {
    await conn.workflowService.startWorkflowExecution({
      namespace: 'default',
      workflowId,
      workflowType: { name: 'w' },
      taskQueue: { name: workflowId },
      requestId: workflowId,
      input: { payloads: [{ metadata: { encoding: Buffer.from('binary/plain') }, data }] },
    });
  }

  it('reads header blocks split into CONTINUATION frames, padded and with priority fields, and literals it indexed earlier', async () => {
    const c = await RawClient.connect(server.address);
    const block = requestBlock('GetSystemInfo', [['x-pad', 'p'.repeat(300)]]);
    // HEADERS with PADDED (0x8) and PRIORITY (0x20): pad length, 5 priority octets, fragment, padding.
    const first = Buffer.concat([
      Buffer.from([7]),
      Buffer.from([0, 0, 0, 0, 16]),
      block.subarray(0, 100),
      Buffer.alloc(7),
    ]);
    c.send(frameBytes(1, 0x8 | 0x20, 1, first));
    c.send(frameBytes(9, 0, 1, block.subarray(100, 200)));
    c.send(frameBytes(9, 0x4, 1, block.subarray(200)));
    // DATA padded, then END_STREAM on an empty frame.
    c.send(frameBytes(0, 0x8, 1, Buffer.concat([Buffer.from([3]), grpcBody(new Uint8Array(0)), Buffer.alloc(3)])));
    c.send(frameBytes(0, 0x1, 1));
    const a = await c.answer(1);
    assert.equal(a.headers[0][':status'], '200');
    assert.equal(a.headers.at(-1)?.['grpc-status'], '0');
    const info = ws.GetSystemInfoResponse.decode(a.data.subarray(5));
    assert.ok(info.capabilities?.signalAndQueryHeader);

    // A header added with incremental indexing (0x40, new name) in stream 3, then used by index
    // 62 (0xbe) in stream 5: the server's dynamic table follows the client's.
    const withIndexed = (id: number, tag: Buffer): void => {
      c.send(frameBytes(1, 0x4, id, Buffer.concat([requestBlock('GetSystemInfo'), tag])));
      c.send(frameBytes(0, 0x1, id, grpcBody(new Uint8Array(0))));
    };
    withIndexed(3, Buffer.concat([Buffer.from([0x40, 5]), Buffer.from('x-tag'), Buffer.from([3]), Buffer.from('one')]));
    withIndexed(5, Buffer.from([0xbe]));
    assert.equal((await c.answer(3)).headers.at(-1)?.['grpc-status'], '0');
    assert.equal((await c.answer(5)).headers.at(-1)?.['grpc-status'], '0');

    // PING is answered with an ACK carrying the same payload.
    c.send(frameBytes(6, 0, 0, Buffer.from('pixflow!')));
    const pong = await c.until((f) => f.type === 6 && (f.flags & 1) === 1);
    assert.equal(pong.payload.toString(), 'pixflow!');
    c.close();
  });

  it('answers a refused request (wrong content type, unknown method) without reading its body, and keeps the connection', async () => {
    const c = await RawClient.connect(server.address);
    c.send(
      frameBytes(
        1,
        0x4,
        1,
        encodeHeaderBlock([
          [':method', 'POST'],
          [':path', '/x'],
          ['content-type', 'text/plain'],
        ]),
      ),
    );
    c.send(frameBytes(1, 0x4, 3, requestBlock('NoSuchMethod')));
    const refused = await c.answer(1);
    assert.equal(refused.headers[0][':status'], '415');
    const unknown = await c.answer(3);
    assert.equal(unknown.headers[0]['grpc-status'], '12');
    assert.match(decodeURIComponent(unknown.headers[0]['grpc-message']), /NoSuchMethod is not implemented/);
    // Their request bodies were never finished: the server told the client to stop (RST_STREAM NO_ERROR).
    await c.until((f) => f.type === 3 && f.id === 3 && f.payload.readUInt32BE(0) === 0);
    // Late data for those streams is dropped; the connection still serves.
    c.send(frameBytes(0, 0x1, 3, grpcBody(new Uint8Array(0))));
    c.send(frameBytes(1, 0x4, 5, requestBlock('GetSystemInfo')));
    c.send(frameBytes(0, 0x1, 5, grpcBody(new Uint8Array(0))));
    assert.equal((await c.answer(5)).headers.at(-1)?.['grpc-status'], '0');
    c.close();
  });

  it('drops a long poll reset by the client (RST_STREAM): the next task goes to the next poller', async () => {
    const taskQueue = `h2-rst-${Date.now()}`;
    const poll = ws.PollWorkflowTaskQueueRequest.encode({
      namespace: 'default',
      taskQueue: { name: taskQueue },
      identity: 'raw',
    }).finish();
    const c = await RawClient.connect(server.address);
    c.send(frameBytes(1, 0x4, 1, requestBlock('PollWorkflowTaskQueue', [['grpc-timeout', '30S']])));
    c.send(frameBytes(0, 0x1, 1, grpcBody(poll)));
    // The poll is waiting (no answer); a PING round trip proves the server read it.
    c.send(frameBytes(6, 0, 0, Buffer.alloc(8)));
    await c.until((f) => f.type === 6 && (f.flags & 1) === 1);
    c.send(frameBytes(3, 0, 1, Buffer.from([0, 0, 0, 8]))); // CANCEL
    c.send(frameBytes(6, 0, 0, Buffer.alloc(8, 1)));
    await c.until((f) => f.type === 6 && (f.flags & 1) === 1 && f.payload[0] === 1);
    await conn.workflowService.startWorkflowExecution({
      namespace: 'default',
      workflowId: taskQueue,
      workflowType: { name: 'w' },
      taskQueue: { name: taskQueue },
      requestId: taskQueue,
    });
    const task = await conn.withDeadline(Date.now() + 10_000, () =>
      conn.workflowService.pollWorkflowTaskQueue({
        namespace: 'default',
        taskQueue: { name: taskQueue },
        identity: 'next',
      }),
    );
    assert.ok(task.taskToken && task.taskToken.length > 0, 'the second poller got the task');
    assert.equal(c.frames.filter((f) => f.id === 1).length, 0, 'the reset poll got no answer');
    c.close();
  });

  it('sends large answers within small client windows, several at once on one session', async () => {
    const workflowId = `h2-big-${Date.now()}`;
    const big = Buffer.alloc(300_000, 7);
    await startWithInput(workflowId, big);
    const req = ws.GetWorkflowExecutionHistoryRequest.encode({
      namespace: 'default',
      execution: { workflowId },
    }).finish();
    const session = http2.connect(`http://${server.address}`, { settings: { initialWindowSize: 1000 } });
    try {
      const one = (): Promise<Buffer> =>
        new Promise((resolve, reject) => {
          const r = session.request({
            ':method': 'POST',
            ':path': `${WS}/GetWorkflowExecutionHistory`,
            'content-type': 'application/grpc',
            te: 'trailers',
          });
          const chunks: Buffer[] = [];
          let status = '';
          r.on('trailers', (t) => (status = String(t['grpc-status'])));
          r.on('data', (d: Buffer) => chunks.push(d));
          r.on('end', () =>
            status === '0' ? resolve(Buffer.concat(chunks)) : reject(new Error(`grpc-status ${status}`)),
          );
          r.on('error', reject);
          r.end(grpcBody(req));
        });
      const answers = await Promise.all([one(), one(), one()]);
      for (const body of answers) {
        assert.equal(body.readUInt32BE(1), body.length - 5);
        const h = ws.GetWorkflowExecutionHistoryResponse.decode(body.subarray(5));
        const input = h.history?.events?.[0].workflowExecutionStartedEventAttributes?.input?.payloads?.[0].data;
        assert.ok(input && Buffer.from(input).equals(big));
      }
    } finally {
      session.close();
    }
  });

  it('holds an answer at a window of 100 bytes and sends the rest when SETTINGS and WINDOW_UPDATE open it', async () => {
    const workflowId = `h2-settings-${Date.now()}`;
    await startWithInput(workflowId, Buffer.alloc(50_000, 3));
    const c = await RawClient.connect(server.address);
    const settings = (initialWindow: number): Buffer => {
      const p = Buffer.alloc(6);
      p.writeUInt16BE(0x4, 0);
      p.writeUInt32BE(initialWindow, 2);
      return frameBytes(4, 0, 0, p);
    };
    c.send(settings(100));
    const req = ws.GetWorkflowExecutionHistoryRequest.encode({
      namespace: 'default',
      execution: { workflowId },
    }).finish();
    c.send(frameBytes(1, 0x4, 1, requestBlock('GetWorkflowExecutionHistory')));
    c.send(frameBytes(0, 0x1, 1, grpcBody(req)));
    await c.until((f) => f.type === 0 && f.id === 1);
    // A PING round trip: by then everything the server could send has arrived.
    c.send(frameBytes(6, 0, 0, Buffer.alloc(8, 2)));
    await c.until((f) => f.type === 6 && (f.flags & 1) === 1 && f.payload[0] === 2);
    const sent = (): number =>
      c.frames.filter((f) => f.type === 0 && f.id === 1).reduce((n, f) => n + f.payload.length, 0);
    assert.equal(sent(), 100, 'only the stream window went out');
    // Raising the initial window applies to the waiting stream (+ 20,000 bytes) ...
    c.send(settings(20_100));
    c.send(frameBytes(6, 0, 0, Buffer.alloc(8, 4)));
    await c.until((f) => f.type === 6 && (f.flags & 1) === 1 && f.payload[0] === 4);
    assert.equal(sent(), 20_100);
    // ... and a stream WINDOW_UPDATE sends the rest, then the trailers.
    const inc = Buffer.alloc(4);
    inc.writeUInt32BE(1_000_000, 0);
    c.send(frameBytes(8, 0, 1, inc));
    const a = await c.answer(1);
    assert.equal(a.headers.at(-1)?.['grpc-status'], '0');
    const h = ws.GetWorkflowExecutionHistoryResponse.decode(a.data.subarray(5));
    assert.equal(
      h.history?.events?.[0].workflowExecutionStartedEventAttributes?.input?.payloads?.[0].data?.length,
      50_000,
    );
    c.close();
  });

  it('closes a connection that does not speak HTTP/2, and keeps serving others', async () => {
    const c = await RawClient.connect(server.address, false);
    c.send(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    const goaway = await c.until((f) => f.type === 7);
    assert.equal(goaway.payload.readUInt32BE(4), 1); // PROTOCOL_ERROR
    await new Promise<void>((resolve) => (c.closed ? resolve() : c.socket.once('close', () => resolve())));
    const info = await conn.workflowService.getSystemInfo({});
    assert.ok(info.capabilities);
  });

  it('says GOAWAY to open connections when it closes, ending idle ones', async () => {
    const own = await startServer({ port: 0, logger: silentLogger });
    const session = http2.connect(`http://${own.address}`);
    await new Promise<void>((resolve, reject) => session.once('connect', () => resolve()).once('error', reject));
    const goaway = new Promise<number>((resolve) => session.once('goaway', (code: number) => resolve(code)));
    const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
    await own.close();
    assert.equal(await goaway, 0);
    await closed;
  });
});
