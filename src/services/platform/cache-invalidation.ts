/**
 * Cross-process invalidation of the read-through caches (docs/performance.md "Where a charge's time goes").
 *
 * Triggers send NOTIFY on `pixflow_cache` in the transaction of every change that a cache depends
 * on (see the migration `cache_invalidation_and_charge_counts`), so the notification is delivered
 * to every listening process when that change commits. Each process keeps one LISTEN connection
 * per database and a generation number: a notification bumps it, and a cached entry is good only
 * while it carries the current generation. Caches serve only while the LISTEN is in effect: if the
 * connection is lost, the generation is bumped (whatever was cached may have missed a
 * notification) and every read goes to the database until LISTEN is back.
 *
 * A writer that must not return before other processes have dropped their entries (deleting an
 * API key: "refused on the very next request") adds its own marker to the change's transaction
 * with `markerSql` and waits with `waitForMarker` until this process's listener has received it
 * and every other listening process has acknowledged it. Notifications arrive in commit order, but
 * a process may still be serving a request before it has read a notification waiting on its
 * socket; so each listener, on a marker that is not its own, first drops its caches (bumps the
 * generation) and then answers `ack:<marker>:<its id>` on the channel. The writer knows who must
 * answer from `pg_stat_activity`: every listener names its connection `pixflow-cache:<id>` once
 * its LISTEN is in effect (before that it serves nothing from memory). A listener that does not
 * answer within the timeout (a process that hangs or dies) lets the writer go on.
 */
import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../../db/types';
import type { Client as PgClient } from 'pg';

export const CACHE_CHANNEL = 'pixflow_cache';
/** `application_name` prefix of the listening connections, by which writers find them. */
const LISTENER_NAME = 'pixflow-cache:';
const RECONNECT_MS = 1_000;

export interface CacheInvalidation {
  /** The current generation; entries cached under another one are stale. */
  generation(): number;
  /** True while LISTEN is in effect: only then may a cache answer from memory. */
  live(): boolean;
  /** A fresh marker to send with `markerSql` inside the change's transaction. */
  newMarker(): string;
  /**
   * Resolves when the listener has received `marker` (true), or after `timeoutMs` (false). Call it
   * before the change's transaction commits, await it after.
   */
  waitForMarker(marker: string, timeoutMs?: number): Promise<boolean>;
  /**
   * Read-your-writes barrier: sends a marker in a transaction of its own and waits until the
   * listener has it. Notifications arrive in commit order, so every change committed before the
   * call has then been announced to this process (and signalled to every other listener).
   */
  barrier(timeoutMs?: number): Promise<boolean>;
  /** Drops every entry now (this process's own writes). */
  bump(): void;
  stop(): Promise<void>;
}

/** `select pg_notify(...)` for a marker; run it in the transaction of the change. */
export const markerSql = (marker: string): [string, string[]] => [
  'select pg_notify(?, ?)',
  [CACHE_CHANNEL, `marker:${marker}`],
];

/** Sends a marker inside the change's transaction (see `markerSql`). */
export async function sendMarker(trx: Db, marker: string): Promise<void> {
  await trx.raw(...markerSql(marker));
}

const shared = new WeakMap<Knex, CacheInvalidation>();

/** The invalidation listener of this database handle, started on first use and shared by every cache on it. */
export function cacheInvalidation(knex: Knex): CacheInvalidation {
  let inv = shared.get(knex);
  if (!inv) {
    inv = new Listener(knex);
    shared.set(knex, inv);
  }
  return inv;
}

/** Stops the shared listener of `knex`, if one was started (at shutdown, before the pool is destroyed). */
export async function stopCacheInvalidation(knex: Knex): Promise<void> {
  const inv = shared.get(knex);
  shared.delete(knex);
  await inv?.stop();
}

/** One process's LISTEN connection, its generation and its markers in flight (see the top of this file). */
class Listener implements CacheInvalidation {
  private gen = 0;
  private listening = false;
  private stopped = false;
  private conn: PgClient | null = null;
  private reconnect: NodeJS.Timeout | undefined;
  private readonly self = crypto.randomUUID();
  /** This process's markers in flight: their own receipt, and the other listeners' acknowledgements. */
  private readonly waiters = new Map<string, MarkerWaiter>();

  constructor(private readonly knex: Knex) {
    void this.connect();
  }

  generation = (): number => this.gen;
  live = (): boolean => this.listening;
  newMarker = (): string => crypto.randomUUID();
  bump = (): void => void this.gen++;

  async barrier(timeoutMs = 2_000): Promise<boolean> {
    if (!this.listening) return false;
    const marker = crypto.randomUUID();
    const seen = this.waitForMarker(marker, timeoutMs);
    await this.knex.raw(...markerSql(marker));
    return seen;
  }

  waitForMarker(marker: string, timeoutMs = 2_000): Promise<boolean> {
    if (!this.listening) return Promise.resolve(false);
    // Read before the change commits (the caller awaits after): the listeners that may hold
    // entries from before it. One that starts listening later starts with nothing cached.
    const expected = this.peers();
    return new Promise<boolean>((resolve) => {
      let seen = false;
      let waitingFor: Set<string> | undefined;
      const acked = new Set<string>();
      const finish = (ok: boolean): void => {
        clearTimeout(timer);
        this.waiters.delete(marker);
        resolve(ok);
      };
      const check = (): void => {
        if (seen && waitingFor && [...waitingFor].every((p) => acked.has(p))) finish(true);
      };
      const timer = setTimeout(() => finish(false), timeoutMs);
      this.waiters.set(marker, {
        seen: () => {
          seen = true;
          check();
        },
        acked: (peer) => {
          acked.add(peer);
          check();
        },
        cancel: () => finish(false),
      });
      expected.then(
        (ids) => {
          waitingFor = new Set(ids);
          check();
        },
        () => finish(false),
      );
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.listening = false;
    this.gen++;
    if (this.reconnect) clearTimeout(this.reconnect);
    const c = this.conn;
    this.conn = null;
    for (const w of [...this.waiters.values()]) w.cancel();
    if (c) await (this.knex.client.destroyRawConnection(c) as Promise<void>).catch(() => undefined);
  }

  /** The other processes listening on this database now (their ids). */
  private async peers(): Promise<string[]> {
    const { rows } = (await this.knex.raw(
      `select substr(application_name, ?) as id from pg_stat_activity
        where datname = current_database() and application_name like ? and application_name <> ?`,
      [LISTENER_NAME.length + 1, `${LISTENER_NAME}%`, `${LISTENER_NAME}${this.self}`],
    )) as { rows: Array<{ id: string }> };
    return rows.map((r) => r.id);
  }

  private lost(c: PgClient): void {
    if (this.conn !== c) return;
    this.conn = null;
    this.listening = false;
    this.gen++;
    void (this.knex.client.destroyRawConnection(c) as Promise<void>).catch(() => undefined);
    this.retryLater();
  }

  private retryLater(): void {
    if (this.stopped) return;
    this.reconnect = setTimeout(() => void this.connect(), RECONNECT_MS);
    this.reconnect.unref();
  }

  private async connect(): Promise<void> {
    let c: PgClient;
    try {
      c = (await this.knex.client.acquireRawConnection()) as PgClient;
    } catch {
      this.retryLater();
      return;
    }
    if (this.stopped) {
      await (this.knex.client.destroyRawConnection(c) as Promise<void>).catch(() => undefined);
      return;
    }
    this.conn = c;
    // The listener never keeps a process alive on its own (a script that destroys its knex and
    // ends must exit); servers and pools hold the process while it has work.
    (c as unknown as { connection?: { stream?: { unref?: () => void } } }).connection?.stream?.unref?.();
    c.on('notification', (msg) => this.notified(c, msg.payload ?? ''));
    c.on('error', () => this.lost(c));
    c.on('end', () => this.lost(c));
    try {
      await c.query(`LISTEN ${CACHE_CHANNEL}`);
      // Named only now that LISTEN is in effect: a writer waits for the listeners it can see.
      await c.query('select set_config($1, $2, false)', ['application_name', `${LISTENER_NAME}${this.self}`]);
    } catch {
      this.lost(c);
      return;
    }
    // Anything cached before LISTEN took effect may have missed a notification.
    this.gen++;
    this.listening = this.conn === c;
  }

  private notified(c: PgClient, payload: string): void {
    // Dropped first: an acknowledgement below promises that this process's caches are clean.
    this.gen++;
    if (payload.startsWith('marker:')) {
      const marker = payload.slice(7);
      const own = this.waiters.get(marker);
      if (own) own.seen();
      else
        void c.query('select pg_notify($1, $2)', [CACHE_CHANNEL, `ack:${marker}:${this.self}`]).catch(() => undefined);
    } else if (payload.startsWith('ack:')) {
      const [, marker = '', peer = ''] = payload.split(':');
      this.waiters.get(marker)?.acked(peer);
    }
  }
}

interface MarkerWaiter {
  seen(): void;
  acked(peer: string): void;
  cancel(): void;
}
