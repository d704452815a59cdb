/**
 * The reconcilers' sweep (docs/api.md "Pagination limits": internal sweeps page by keyset, never by
 * OFFSET): rows in pages of `batch` after the last row's key, until a page comes back short, so a
 * sweep reaches every row however many there are, and each page is an index seek.
 */
export async function forEachKeysetPage<R, K>(
  opts: {
    batch: number;
    /** Up to `limit` rows after `after` (null: from the start), in key order. */
    fetch: (after: K | null, limit: number) => Promise<R[]>;
    keyOf: (row: R) => K;
  },
  visit: (row: R) => Promise<void>,
): Promise<number> {
  let after: K | null = null;
  let visited = 0;
  for (;;) {
    const rows = await opts.fetch(after, opts.batch);
    for (const row of rows) {
      await visit(row);
      visited++;
    }
    const last = rows[rows.length - 1];
    if (rows.length < opts.batch || last === undefined) return visited;
    after = opts.keyOf(last);
  }
}
