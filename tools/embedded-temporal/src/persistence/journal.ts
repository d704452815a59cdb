/**
 * Durable state (`--db-filename FILE`): an append-only journal, fsync'd by group commit.
 *
 * Like the real Temporal server, what is persisted is each run's history (the events appended
 * since the last commit) plus execution-level records: namespaces, run creation (ids and start
 * request id; everything else is in WorkflowExecutionStarted), per-run durable state that history
 * cannot tell (activity attempts, buffered events; see replay.ts), truncation and retention purge.
 * On start the file is read back and every run is rebuilt by replaying its history.
 *
 * File: 8-byte magic, then frames `[u32 length][u32 crc32][payload]`. One frame is one commit
 * (every change made since the previous commit, across all runs), so a commit is all or nothing: a
 * torn last frame fails its CRC and is cut off at the next open. Inside a frame, records
 * `[u8 kind][u32 length][body]`: META (JSON), EVENTS (run id, first event id, History protobuf),
 * STATE (JSON, protobuf fields base64).
 *
 * Group commit: changes only mark runs dirty. A commit runs at most once per event-loop turn
 * (setImmediate) while none is in flight, writes one frame and calls fdatasync once; RPC answers
 * wait for the commit that covers them (`barrier()`), so nothing acknowledged can be lost.
 */
import fs from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import type { Execution } from '../execution';
import { performance } from 'node:perf_hooks';
import type { Logger } from '../logger';
import type { Handler } from '../rpc/grpc';
import { encodeMessage, temporal, type HistoryEvent } from '../proto';
import type { ActivityState, RunDurableState, RunRecord } from './replay';

const MAGIC = Buffer.from('PXTJRNL1');
const KIND_META = 1;
const KIND_EVENTS = 2;
const KIND_STATE = 3;

const History = temporal.api.history.v1.History;
const PayloadsMsg = temporal.api.common.v1.Payloads;
const FailureMsg = temporal.api.failure.v1.Failure;

export interface NamespaceRecord {
  name: string;
  id: string;
  description: string;
  retentionMs: number;
}

type Meta =
  | ({ t: 'ns' } & NamespaceRecord)
  | ({ t: 'run' } & RunRecord)
  | { t: 'purge'; r: string }
  | { t: 'trunc'; r: string; n: number };

interface StateJson {
  r: string;
  activities: (Omit<ActivityState, 'heartbeatDetails' | 'lastFailure'> & { hb?: string; lf?: string })[];
  buffered: string[];
}

export interface LoadedRun extends RunRecord {
  events: HistoryEvent[];
  state?: RunDurableState;
  /** Where the file keeps the run's whole history (see `HistorySpans`), if it can tell. */
  spans?: HistorySpans;
}

/**
 * Where the journal file keeps a run's history: the `History` bytes of each of its EVENTS records,
 * in order, as flat [position, length] pairs. Their concatenation is the run's `History` message
 * (repeated fields concatenate), so a parked run (src/dormant.ts) keeps these few numbers instead
 * of its events. Unknown (undefined) once the history was truncated or a write failed.
 */
export type HistorySpans = number[];

export interface LoadedState {
  namespaces: NamespaceRecord[];
  /** In creation order (chains keep their run order). */
  runs: LoadedRun[];
}

export interface JournalStats {
  commits: number;
  fsyncs: number;
  bytes: number;
  events: number;
  /** The longest write + fdatasync of one commit, in ms: every answer of that commit waited for it. */
  slowestCommitMs: number;
}

/** A commit slower than this is logged: the RPCs it answers all waited that long (README "Durable state"). */
const SLOW_COMMIT_MS = 250;

function record(kind: number, body: Buffer): Buffer {
  const head = Buffer.allocUnsafe(5);
  head.writeUInt8(kind, 0);
  head.writeUInt32LE(body.length, 1);
  return Buffer.concat([head, body]);
}

function frame(payload: Buffer): Buffer {
  const head = Buffer.allocUnsafe(8);
  head.writeUInt32LE(payload.length, 0);
  head.writeUInt32LE(crc32(payload), 4);
  return Buffer.concat([head, payload]);
}

/**
 * `fields`: the events, each encoded as a `History` field (RunHistory.encodedRange, the same bytes
 * its poll answers use); their concatenation is the `History` message.
 */
function eventsRecord(runId: string, firstEventId: number, fields: Uint8Array[]): Buffer {
  const rid = Buffer.from(runId);
  const head = Buffer.allocUnsafe(6);
  head.writeUInt16LE(rid.length, 0);
  head.writeUInt32LE(firstEventId, 2);
  return record(KIND_EVENTS, Buffer.concat([head.subarray(0, 2), rid, head.subarray(2), ...fields]));
}

function b64(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64');
}

function stateRecord(runId: string, s: RunDurableState): Buffer {
  const json: StateJson = {
    r: runId,
    activities: s.activities.map(({ heartbeatDetails, lastFailure, ...rest }) => ({
      ...rest,
      hb: heartbeatDetails ? b64(PayloadsMsg.encode(heartbeatDetails).finish()) : undefined,
      lf: lastFailure ? b64(FailureMsg.encode(lastFailure).finish()) : undefined,
    })),
    buffered: s.buffered.map((events) => b64(History.encode({ events }).finish())),
  };
  return record(KIND_STATE, Buffer.from(JSON.stringify(json)));
}

function parseState(json: StateJson): RunDurableState {
  return {
    activities: json.activities.map(({ hb, lf, ...rest }) => ({
      ...rest,
      heartbeatDetails: hb ? PayloadsMsg.decode(Buffer.from(hb, 'base64')) : null,
      lastFailure: lf ? FailureMsg.decode(Buffer.from(lf, 'base64')) : null,
    })),
    buffered: json.buffered.map((s) => History.decode(Buffer.from(s, 'base64')).events),
  };
}

function metaRecord(m: Meta): Buffer {
  return record(KIND_META, Buffer.from(JSON.stringify(m)));
}

/**
 * Parse a journal image; returns the state and the length of its valid prefix (a torn last frame
 * is excluded). Throws on damage before the end, rather than dropping later commits.
 */
export function parseJournal(buf: Buffer): { state: LoadedState; validLength: number; purged: number; frames: number } {
  const namespaces = new Map<string, NamespaceRecord>();
  const runs = new Map<string, LoadedRun>();
  let purged = 0;
  let frames = 0;
  if (buf.length < MAGIC.length || !buf.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new Error('not a pixflow embedded-temporal journal (bad magic)');
  }
  let off = MAGIC.length;
  while (off + 8 <= buf.length) {
    const len = buf.readUInt32LE(off);
    const crc = buf.readUInt32LE(off + 4);
    if (off + 8 + len > buf.length) break;
    const payload = buf.subarray(off + 8, off + 8 + len);
    if (crc32(payload) !== crc) {
      // The last frame can be torn by a crash mid-write; a bad frame with data after it is damage.
      if (off + 8 + len < buf.length)
        throw new Error(`journal is corrupt at byte ${off} (a commit fails its checksum); refusing to start`);
      break;
    }
    let p = 0;
    while (p + 5 <= payload.length) {
      const kind = payload.readUInt8(p);
      const blen = payload.readUInt32LE(p + 1);
      const body = payload.subarray(p + 5, p + 5 + blen);
      p += 5 + blen;
      if (kind === KIND_META) {
        const m = JSON.parse(body.toString('utf8')) as Meta;
        if (m.t === 'ns')
          namespaces.set(m.name, { name: m.name, id: m.id, description: m.description, retentionMs: m.retentionMs });
        else if (m.t === 'run')
          runs.set(m.runId, {
            namespace: m.namespace,
            workflowId: m.workflowId,
            runId: m.runId,
            requestId: m.requestId,
            events: [],
          });
        else if (m.t === 'purge') {
          if (runs.delete(m.r)) purged++;
        } else if (m.t === 'trunc') {
          const run = runs.get(m.r);
          if (run) {
            run.events.length = Math.min(run.events.length, m.n);
            run.spans = undefined;
          }
        }
      } else if (kind === KIND_EVENTS) {
        const ridLen = body.readUInt16LE(0);
        const runId = body.subarray(2, 2 + ridLen).toString('utf8');
        const first = body.readUInt32LE(2 + ridLen);
        const run = runs.get(runId);
        if (!run) continue;
        const pos = off + 8 + (p - blen) + 6 + ridLen;
        if (first === 1) run.spans = [pos, blen - 6 - ridLen];
        else if (run.spans && first - 1 === run.events.length) run.spans.push(pos, blen - 6 - ridLen);
        else run.spans = undefined;
        const events = History.decode(body.subarray(6 + ridLen)).events;
        run.events.length = Math.min(run.events.length, first - 1);
        run.events.push(...events);
      } else if (kind === KIND_STATE) {
        const json = JSON.parse(body.toString('utf8')) as StateJson;
        const run = runs.get(json.r);
        if (run) run.state = parseState(json);
      }
    }
    off += 8 + len;
    frames++;
  }
  return {
    state: { namespaces: [...namespaces.values()], runs: [...runs.values()] },
    validLength: off,
    purged,
    frames,
  };
}

export class Journal {
  private fd: number;
  /** For `read`: the append descriptor cannot read. */
  private readFd: number;
  /**
   * The file's length, so the position of each frame is known as it is appended (one writer, one
   * write at a time); -1 once a failed write left it unknown (no more positions are handed out).
   */
  private size: number;
  /**
   * EVENTS records in the commit being built or written, and where their `History` bytes are in
   * its frame (`first`: the run's events from 1); each run's `spans` learn them once it is written.
   */
  private locating: { run: Execution; rel: number; len: number; first: boolean }[] = [];
  private dirty = new Set<Execution>();
  /** Runs whose events are in the commit being written. */
  private writing = new Set<Execution>();
  private meta: Meta[] = [];
  /** Events already in the file, by run id. */
  private persisted = new Map<string, number>();
  /** Runs whose last STATE record was non-empty (so an empty one must follow). */
  private hasState = new Set<string>();
  private scheduled = false;
  private inFlight: Promise<void> | null = null;
  private waiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  private closed = false;
  readonly stats: JournalStats = { commits: 0, fsyncs: 0, bytes: 0, events: 0, slowestCommitMs: 0 };

  private constructor(
    readonly file: string,
    fd: number,
    private readonly logger: Logger,
  ) {
    this.fd = fd;
    this.readFd = fs.openSync(file, 'r');
    this.size = fs.fstatSync(fd).size;
  }

  /**
   * A run's history read back from the file (`spans`, see `HistorySpans`), one buffer. Used to
   * park and wake a run (src/dormant.ts); only spans of completed commits are ever handed out.
   */
  read(spans: HistorySpans): Buffer {
    let total = 0;
    for (let i = 1; i < spans.length; i += 2) total += spans[i];
    const buf = Buffer.allocUnsafe(total);
    let at = 0;
    for (let i = 0; i < spans.length; i += 2) {
      const pos = spans[i];
      const len = spans[i + 1];
      const n = fs.readSync(this.readFd, buf, at, len, pos);
      if (n !== len) throw new Error(`journal: short read at ${pos} (${n} of ${len} bytes)`);
      at += len;
    }
    return buf;
  }

  /**
   * Open (or create) the journal and read it back. A torn tail is cut off; a file that is mostly
   * purged runs is rewritten with only the live ones (compaction).
   */
  static open(file: string, logger: Logger): { journal: Journal; loaded: LoadedState } {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    acquireLock(file);
    try {
      return Journal.openLocked(file, logger);
    } catch (err) {
      releaseLock(file);
      throw err;
    }
  }

  private static openLocked(file: string, logger: Logger): { journal: Journal; loaded: LoadedState } {
    let loaded: LoadedState = { namespaces: [], runs: [] };
    if (fs.existsSync(file) && fs.statSync(file).size > 0) {
      const buf = fs.readFileSync(file);
      const parsed = parseJournal(buf);
      loaded = parsed.state;
      if (parsed.validLength < buf.length) {
        logger.warn({ file, dropped: buf.length - parsed.validLength }, 'journal: cut off a torn last commit');
        fs.truncateSync(file, parsed.validLength);
      }
      if (parsed.purged > 100 && parsed.purged >= loaded.runs.length) {
        compact(file, loaded);
        // The runs moved within the file: their parked form keeps its bytes in memory instead.
        for (const r of loaded.runs) r.spans = undefined;
        logger.info({ file, live: loaded.runs.length, purged: parsed.purged }, 'journal: compacted');
      }
    } else {
      fs.writeFileSync(file, MAGIC);
      fsyncDir(file);
    }
    const fd = fs.openSync(file, 'a');
    const journal = new Journal(file, fd, logger);
    for (const r of loaded.runs) {
      journal.persisted.set(r.runId, r.events.length);
      if (r.state && (r.state.activities.length > 0 || r.state.buffered.length > 0)) journal.hasState.add(r.runId);
    }
    return { journal, loaded };
  }

  /**
   * Changes of this run not yet written, or being written (the run object is still needed for
   * them: a commit in flight records the positions of its events on it when it completes).
   */
  isPending(run: Execution): boolean {
    return this.dirty.has(run) || this.writing.has(run);
  }

  touch(run: Execution): void {
    this.dirty.add(run);
    this.schedule();
  }

  namespaceRegistered(ns: NamespaceRecord): void {
    this.meta.push({ t: 'ns', ...ns });
    this.schedule();
  }

  runCreated(rec: RunRecord): void {
    this.meta.push({ t: 'run', ...rec });
    this.schedule();
  }

  purged(runId: string): void {
    this.persisted.delete(runId);
    this.hasState.delete(runId);
    this.meta.push({ t: 'purge', r: runId });
    this.schedule();
  }

  /** Resolves once every change made so far is on disk. */
  barrier(): Promise<void> {
    if (this.dirty.size === 0 && this.meta.length === 0) return this.inFlight ?? Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /** Final commit, then close the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.barrier().catch(() => undefined);
    if (this.inFlight) await this.inFlight.catch(() => undefined);
    this.closed = true;
    fs.closeSync(this.fd);
    fs.closeSync(this.readFd);
    releaseLock(this.file);
  }

  /** Close without committing pending changes (a start-up that failed half-way). */
  abandon(): void {
    if (this.closed) return;
    this.closed = true;
    this.dirty.clear();
    this.meta = [];
    fs.closeSync(this.fd);
    fs.closeSync(this.readFd);
    releaseLock(this.file);
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight || this.closed) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.commit();
    });
  }

  private build(): Buffer | null {
    this.locating = [];
    const records: Buffer[] = [];
    let at = 0; // bytes of the payload so far
    const push = (r: Buffer): void => {
      records.push(r);
      at += r.length;
    };
    for (const m of this.meta) push(metaRecord(m));
    this.meta = [];
    for (const run of this.dirty) {
      const id = run.runId;
      let done = this.persisted.get(id) ?? 0;
      const length = run.log.length;
      if (length < done) {
        push(metaRecord({ t: 'trunc', r: id, n: length }));
        done = length;
        run.spans = undefined; // the file's records no longer concatenate to the history
      }
      if (length > done) {
        const rec = eventsRecord(id, done + 1, run.log.encodedRange(done, length));
        // Where these events' `History` bytes will be, once this frame is written.
        const head = 5 + 6 + Buffer.byteLength(id);
        if (this.size >= 0) this.locating.push({ run, rel: at + head, len: rec.length - head, first: done === 0 });
        else run.spans = undefined; // positions are unknown after a failed write
        push(rec);
        this.stats.events += length - done;
        this.persisted.set(id, length);
      }
      const s = run.durableState();
      const nonEmpty = s.activities.length > 0 || s.buffered.length > 0;
      if (nonEmpty || this.hasState.has(id)) {
        push(stateRecord(id, s));
        if (nonEmpty) this.hasState.add(id);
        else this.hasState.delete(id);
      }
    }
    this.dirty.clear();
    return records.length > 0 ? frame(Buffer.concat(records)) : null;
  }

  private commit(): void {
    if (this.closed) return;
    const waiters = this.waiters;
    this.waiters = [];
    let buf: Buffer | null;
    try {
      buf = this.build();
    } catch (err) {
      this.logger.error({ err: String(err) }, 'journal: encoding a commit failed');
      for (const w of waiters) w.reject(err);
      return;
    }
    if (!buf) {
      for (const w of waiters) w.resolve();
      return;
    }
    const data = buf;
    const framePos = this.size;
    const locating = this.locating;
    this.locating = [];
    for (const l of locating) this.writing.add(l.run);
    const began = performance.now();
    const flight = new Promise<void>((resolve, reject) => {
      fs.write(this.fd, data, 0, data.length, null, (err) => {
        if (err) return reject(err);
        fs.fdatasync(this.fd, (err2) => (err2 ? reject(err2) : resolve()));
      });
    });
    this.inFlight = flight;
    flight.then(
      () => {
        const tookMs = performance.now() - began;
        if (tookMs > this.stats.slowestCommitMs) this.stats.slowestCommitMs = tookMs;
        if (tookMs > SLOW_COMMIT_MS) {
          this.logger.warn(
            { ms: Math.round(tookMs), bytes: data.length, waiting: waiters.length },
            'journal: slow commit (write + fdatasync); its answers waited for it',
          );
        }
        this.stats.commits++;
        this.stats.fsyncs++;
        this.stats.bytes += data.length;
        this.writing.clear();
        if (this.size >= 0) {
          this.size += data.length;
          for (const l of locating) {
            const pos = framePos + 8 + l.rel;
            if (l.first) l.run.spans = [pos, l.len];
            else l.run.spans?.push(pos, l.len);
            // A closed run's last events are on disk: it may be parked for its retention (src/dormant.ts).
            if (!l.run.isOpen && l.run.spans) l.run.store.noteIdle(l.run);
          }
        }
        this.inFlight = null;
        for (const w of waiters) w.resolve();
        if (this.dirty.size > 0 || this.meta.length > 0 || this.waiters.length > 0) this.schedule();
      },
      (err: unknown) => {
        this.inFlight = null;
        this.writing.clear();
        // Part of the frame may be in the file: positions after it are unknown from here on.
        this.size = -1;
        for (const l of locating) l.run.spans = undefined;
        this.logger.error({ err: String(err), file: this.file }, 'journal: write failed; state is not durable');
        for (const w of waiters) w.reject(err);
        if (this.dirty.size > 0 || this.meta.length > 0 || this.waiters.length > 0) this.schedule();
      },
    );
  }
}

/**
 * The RPC handlers of a durable server: every answer, success or error (long polls included),
 * waits until the state it reflects is on disk, so nothing acknowledged can be lost. Wrapping the
 * handler table keeps this independent of the transport that serves it.
 */
export function afterCommit<T extends Record<string, Handler>>(impl: T, journal: Journal): T {
  const out: Record<string, Handler> = {};
  for (const [name, fn] of Object.entries(impl)) {
    out[name] = async (req, ctx) => {
      let resp: object;
      try {
        resp = await fn(req, ctx);
      } catch (err) {
        await journal.barrier();
        throw err;
      }
      await journal.barrier();
      return resp;
    };
  }
  return out as T;
}

/**
 * One writer per journal: `FILE.lock` holds the owner's pid. Two servers appending to one file
 * would interleave their commits, so a second one refuses to start while the owner lives; a lock
 * left by a killed owner (SIGKILL, power loss) is taken over. An owner that is just exiting (a
 * test environment torn down and recreated) gets two seconds to go.
 */
const openHere = new Set<string>();

function acquireLock(file: string): void {
  const key = path.resolve(file);
  if (openHere.has(key)) throw new Error(`${file} is already open in this process`);
  const lock = `${file}.lock`;
  const deadline = Date.now() + 2000;
  for (;;) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      openHere.add(key);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const owner = Number(fs.readFileSync(lock, 'utf8').trim());
    if (!(owner > 0) || owner === process.pid || !isNodeProcess(owner)) {
      fs.rmSync(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`${file} is in use by process ${owner} (lock file ${lock})`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
}

function releaseLock(file: string): void {
  openHere.delete(path.resolve(file));
  const lock = `${file}.lock`;
  try {
    if (Number(fs.readFileSync(lock, 'utf8').trim()) === process.pid) fs.rmSync(lock, { force: true });
  } catch {
    // already gone
  }
}

function isNodeProcess(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // A reused pid naming another program is not our owner (Linux tells; elsewhere trust the pid).
    return /node|temporal/.test(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
  } catch {
    return !fs.existsSync('/proc/self');
  }
}

/** Rewrite the journal with only the live runs (write a temporary file, fsync, rename). */
function compact(file: string, state: LoadedState): void {
  const tmp = `${file}.compact.tmp`;
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, MAGIC);
    const records: Buffer[] = state.namespaces.map((n) => metaRecord({ t: 'ns', ...n }));
    const flush = (): void => {
      if (records.length === 0) return;
      fs.writeSync(fd, frame(Buffer.concat(records.splice(0))));
    };
    for (const r of state.runs) {
      records.push(
        metaRecord({
          t: 'run',
          namespace: r.namespace,
          workflowId: r.workflowId,
          runId: r.runId,
          requestId: r.requestId,
        }),
      );
      if (r.events.length > 0) records.push(eventsRecord(r.runId, 1, [encodeMessage(History, { events: r.events })]));
      if (r.state && (r.state.activities.length > 0 || r.state.buffered.length > 0))
        records.push(stateRecord(r.runId, r.state));
      if (records.length > 256) flush();
    }
    flush();
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  fsyncDir(file);
}

function fsyncDir(file: string): void {
  try {
    const dfd = fs.openSync(path.dirname(path.resolve(file)), 'r');
    try {
      fs.fsyncSync(dfd);
    } finally {
      fs.closeSync(dfd);
    }
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic.
  }
}
