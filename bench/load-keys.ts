/**
 * The load generator for a target measured across several merchants (`bench/external.ts`,
 * README "Where a read's time goes", Balance reads): autocannon, in this process of its own, with
 * connection i presenting API key i mod n, so that the requests in flight at any moment belong to
 * different merchants (with as many keys as connections, one merchant per connection). The
 * command-line autocannon sends one set of headers on every connection, i.e. one merchant.
 *
 *   node --import tsx bench/load-keys.ts '<json: { url, connections, seconds, method, tokens }>'
 *
 * Prints autocannon's result as JSON, as `autocannon --json` does.
 */
// autocannon has no type declarations; only the part used here is described.
const autocannon = require('autocannon') as (opts: {
  url: string;
  connections: number;
  duration: number;
  method: string;
  headers: Record<string, string>;
  setupClient: (client: { setHeaders(h: Record<string, string>): void }) => void;
}) => Promise<unknown>;

interface LoadSpec {
  url: string;
  connections: number;
  seconds: number;
  method: string;
  tokens: string[];
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
  if (!spec.url || spec.tokens.length === 0) throw new Error('usage: load-keys.ts <json { url, connections, seconds, method, tokens }>');
  let next = 0;
  const headersOf = (token: string): Record<string, string> => ({ 'content-type': 'application/json', authorization: `Bearer ${token}` });
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.seconds,
    method: spec.method,
    headers: headersOf(spec.tokens[0] ?? ''),
    setupClient: (client) => {
      client.setHeaders(headersOf(spec.tokens[next++ % spec.tokens.length] ?? ''));
    },
  });
  process.stdout.write(JSON.stringify(result));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
