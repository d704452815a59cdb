/**
 * A client that goes away before its body is read (it closed the connection while the request
 * waited for the rate limiter) is not a server failure: the request is counted as 400 "Request
 * aborted" and logged as an ordinary request, never as an unhandled error answered 500.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { createLogger } from '../../src/lib/logger';
import { waitUntil } from '../../tools/harness/src/stack';
import { startApi, type TestApi } from '../support/api';

interface LogLine {
  level: string;
  msg: string;
  path?: string;
  status?: number;
}

describe('a request whose client leaves before its body is read', () => {
  const lines: LogLine[] = [];
  let api: TestApi;
  before(async () => {
    // A fresh app: its address limiter holds no lease yet, so the first request waits for the
    // shared counter's upsert before the body parser runs, and the client's close lands meanwhile.
    const logger = createLogger({
      level: 'info',
      destination: { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) },
    });
    api = await startApi({ deps: { logger } });
  });
  after(() => api.close());

  it('is logged as a 400, not as an unhandled error', async () => {
    const { port } = new URL(api.baseUrl);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.end(
      'POST /v1/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        'Content-Length: 100\r\n\r\n{"email":',
    );
    socket.destroy();
    await waitUntil(
      () => lines.some((l) => l.msg === 'request' && l.path === '/v1/auth/login'),
      10_000,
      'the access log line of the aborted request',
      20,
    );
    const errors = lines.filter((l) => l.level === 'error');
    assert.deepEqual(errors, []);
    const access = lines.find((l) => l.msg === 'request' && l.path === '/v1/auth/login');
    assert.equal(access?.status, 400);
  });
});
