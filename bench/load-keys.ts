/**
 * The load generator for a target spread over several merchants or pages (`bench/external.ts`,
 * docs/performance.md "Where a read's time goes", one statement per turn): autocannon, in this process of its own, with
 * connection i presenting API key i mod n and asking path i mod m, so that the requests in flight
 * at any moment are of different merchants, or different pages (with as many keys or paths as
 * connections, one per connection). The command-line autocannon sends one request on every
 * connection.
 *
 *   node --import tsx bench/load-keys.ts '<json: { url, connections, seconds, method, tokens, paths? }>'
 *
 * `url` is the origin and default path; `paths`, when given, are the paths of the connections.
 * Prints autocannon's result as JSON, as `autocannon --json` does.
 */
// autocannon has no type declarations; only the part used here is described.
const autocannon = require('autocannon') as (opts: {
  url: string;
  connections: number;
  duration: number;
  method: string;
  headers: Record<string, string>;
  setupClient: (client: {
    setRequests(r: Array<{ headers: Record<string, string>; path?: string; method: string }>): void;
  }) => void;
}) => Promise<unknown>;

interface LoadSpec {
  url: string;
  connections: number;
  seconds: number;
  method: string;
  tokens: string[];
  paths?: string[];
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? '{}') as LoadSpec;
  if (!spec.url || spec.tokens.length === 0)
    throw new Error('usage: load-keys.ts <json { url, connections, seconds, method, tokens, paths? }>');
  let next = 0;
  const headersOf = (token: string): Record<string, string> => ({
    'content-type': 'application/json',
    authorization: `Bearer ${token}`,
  });
  const result = await autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.seconds,
    method: spec.method,
    headers: headersOf(spec.tokens[0] ?? ''),
    setupClient: (client) => {
      const i = next++;
      const path = spec.paths?.[i % spec.paths.length];
      // This connection's own request list (one request), kept for every request it sends.
      client.setRequests([
        {
          method: spec.method,
          headers: headersOf(spec.tokens[i % spec.tokens.length] ?? ''),
          ...(path ? { path } : {}),
        },
      ]);
    },
  });
  process.stdout.write(JSON.stringify(result));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
