/**
 * Run-wide resources (one embedded PostgreSQL, one Temporal test environment, ...) are created
 * lazily by the first suite that needs them and torn down once, after the last suite.
 * Each lazy singleton registers its teardown here; root-hooks.ts runs them in reverse order.
 */
type Teardown = () => Promise<void>;

const teardowns: Teardown[] = [];

export function onRunEnd(fn: Teardown): void {
  teardowns.push(fn);
}

export async function runTeardowns(): Promise<void> {
  while (teardowns.length > 0) {
    const fn = teardowns.pop();
    if (!fn) break;
    try {
      await fn();
    } catch (err) {
      // A failing teardown must not hide the others; report it and go on.
      console.error('teardown failed:', err);
    }
  }
}
