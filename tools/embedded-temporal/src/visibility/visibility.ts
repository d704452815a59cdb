/**
 * Visibility (README "Visibility"): one small row per run, per namespace, with indexes by run
 * id, workflow type, task queue, status and the value of every Keyword / KeywordList search
 * attribute, plus all rows in start order. A list or count parses its filter
 * (src/visibility/query.ts), takes the smallest candidate set an equality in the filter gives
 * (else walks the rows in list order) and evaluates the whole filter on the candidates only.
 *
 * Rows hold no run object: live and parked runs (src/dormant.ts) share them, so a count wakes
 * nothing and parking needs no visibility code. The store keeps them right (`put` at start,
 * close, upsert and restore; `remove` at the retention purge).
 */
import { invalidArgument } from '../errors';
import { temporal, WorkflowExecutionStatus } from '../proto';
import {
  evaluate,
  parseQuery,
  parseRfc3339,
  predefinedAttributes,
  statusNames,
  systemAttributeTypes,
  isSystemAttribute,
  type AttrValue,
  type Column,
  type Expr,
  type OrderTerm,
  type ValueType,
  type VisRow,
} from './query';

type Payload = temporal.api.common.v1.IPayload;

/** What `put` reads of a run (an Execution has all of it). */
export interface IndexedRun {
  readonly namespace: string;
  readonly runId: string;
  readonly workflowId: string;
  readonly workflowType: string;
  readonly taskQueue: string;
  readonly status: number;
  readonly startTime: number;
  readonly closeTime: number;
  readonly executionTime: number;
  readonly parent?: { workflowId: string; runId: string };
  readonly searchAttributes: temporal.api.common.v1.ISearchAttributes;
}

export interface ListPage {
  rows: VisRow[];
  /** Empty when this is the last page. */
  nextPageToken: Buffer;
}

export interface CountResult {
  count: number;
  groups?: { status: number; count: number }[];
}

/** A set of rows kept as the row itself while it has one (most attribute values, e.g. an EntityId, belong to one run). */
type Bucket = VisRow | Set<VisRow>;

const UNSPECIFIED = WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED;

/** Candidate sets up to this size are sorted; bigger ones (or none) are walked in start order. */
const SORT_LIMIT = 4096;

function bucketAdd(map: Map<string, Bucket>, key: string, row: VisRow): void {
  const b = map.get(key);
  if (b === undefined) map.set(key, row);
  else if (b instanceof Set) b.add(row);
  else if (b !== row) map.set(key, new Set([b, row]));
}

function bucketDelete(map: Map<string, Bucket>, key: string, row: VisRow): void {
  const b = map.get(key);
  if (b === row) map.delete(key);
  else if (b instanceof Set) {
    b.delete(row);
    if (b.size === 1) map.set(key, b.values().next().value as VisRow);
  }
}

function bucketRows(b: Bucket | undefined): VisRow[] {
  return b === undefined ? [] : b instanceof Set ? [...b] : [b];
}

function bucketSize(b: Bucket | undefined): number {
  return b === undefined ? 0 : b instanceof Set ? b.size : 1;
}

const metadataText = (p: Payload, key: string): string => {
  const v = p.metadata?.[key];
  return v ? Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8') : '';
};

const typeNames: Record<string, ValueType> = {
  Keyword: 'Keyword',
  KeywordList: 'KeywordList',
  Text: 'Text',
  Int: 'Int',
  Double: 'Double',
  Bool: 'Bool',
  Datetime: 'Datetime',
  INDEXED_VALUE_TYPE_KEYWORD: 'Keyword',
  INDEXED_VALUE_TYPE_KEYWORD_LIST: 'KeywordList',
  INDEXED_VALUE_TYPE_TEXT: 'Text',
  INDEXED_VALUE_TYPE_INT: 'Int',
  INDEXED_VALUE_TYPE_DOUBLE: 'Double',
  INDEXED_VALUE_TYPE_BOOL: 'Bool',
  INDEXED_VALUE_TYPE_DATETIME: 'Datetime',
};

/**
 * One search attribute payload (JSON, as every SDK writes them; the type in the metadata when the
 * SDK sets typed attributes), decoded to the value filters compare. Untyped ones get the type of
 * their JSON value. Null (an upsert that removes it) or undecodable: undefined.
 */
export function decodeAttribute(
  p: Payload,
  known: ValueType | undefined,
): { type: ValueType; value: AttrValue } | undefined {
  if (metadataText(p, 'encoding') !== 'json/plain' || !p.data) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(p.data.buffer, p.data.byteOffset, p.data.byteLength).toString('utf8'));
  } catch {
    return undefined;
  }
  if (v === null || v === undefined) return undefined;
  let type = typeNames[metadataText(p, 'type')] ?? known;
  if (!type) {
    const first: unknown = Array.isArray(v) ? v[0] : v;
    type =
      Array.isArray(v) && v.length !== 1
        ? 'KeywordList'
        : typeof first === 'string'
          ? 'Keyword'
          : typeof first === 'boolean'
            ? 'Bool'
            : typeof first === 'number'
              ? Number.isInteger(first)
                ? 'Int'
                : 'Double'
              : 'Keyword';
  }
  // Legacy (untyped) attributes come as one-element arrays.
  if (type !== 'KeywordList' && Array.isArray(v)) {
    if (v.length !== 1) return undefined;
    v = v[0];
  }
  switch (type) {
    case 'KeywordList': {
      const list = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
      return list.length > 0 ? { type, value: list } : undefined;
    }
    case 'Keyword':
    case 'Text':
      return typeof v === 'string' ? { type, value: v } : undefined;
    case 'Int':
    case 'Double':
      return typeof v === 'number' ? { type, value: v } : undefined;
    case 'Bool':
      return typeof v === 'boolean' ? { type, value: v } : undefined;
    case 'Datetime': {
      const ms = typeof v === 'string' ? parseRfc3339(v) : NaN;
      return Number.isNaN(ms) ? undefined : { type, value: ms };
    }
  }
}

/** A row's start-order key: newest start first, then run id (descending), as `list` answers by default. */
function startOrder(a: VisRow, b: VisRow): number {
  return a.startTime - b.startTime || (a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0);
}

type Key = string | number | boolean | null;

function compareKey(a: Key, b: Key, desc: boolean): number {
  // Rows without a value come last in either direction (as Elasticsearch sorts missing values).
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  const c = a < b ? -1 : a > b ? 1 : 0;
  return desc ? -c : c;
}

function scalar(v: AttrValue | null): Key {
  return Array.isArray(v) ? (v[0] ?? null) : v;
}

class NamespaceIndex {
  readonly rows = new Map<string, VisRow>();
  /** Every row, ascending start order (newest last); removed rows linger as status 0 until compacted. */
  private order: VisRow[] = [];
  private unsorted = false;
  private dead = 0;
  readonly byStatus = new Map<number, Set<VisRow>>();
  /** Type and queue names: the map key is the one copy every row of that type (or queue) points at. */
  readonly byType = new Map<string, Bucket>();
  readonly byQueue = new Map<string, Bucket>();
  private readonly names = new Map<string, string>();
  /** Keyword and KeywordList attribute values → rows. */
  readonly byAttr = new Map<string, Map<string, Bucket>>();
  /** Custom search attributes this namespace has seen or was told of, by name. */
  readonly types = new Map<string, ValueType>();

  intern(s: string): string {
    const have = this.names.get(s);
    if (have !== undefined) return have;
    this.names.set(s, s);
    return s;
  }

  add(row: VisRow): void {
    this.rows.set(row.runId, row);
    bucketAdd(this.byType, row.type, row);
    bucketAdd(this.byQueue, row.queue, row);
    this.statusAdd(row);
    this.attrsAdd(row);
    const last = this.order[this.order.length - 1];
    if (last !== undefined && startOrder(last, row) > 0) this.unsorted = true;
    this.order.push(row);
  }

  remove(row: VisRow): void {
    this.rows.delete(row.runId);
    bucketDelete(this.byType, row.type, row);
    bucketDelete(this.byQueue, row.queue, row);
    this.byStatus.get(row.status)?.delete(row);
    this.attrsDelete(row);
    row.status = UNSPECIFIED;
    this.dead++;
  }

  statusAdd(row: VisRow): void {
    let s = this.byStatus.get(row.status);
    if (!s) this.byStatus.set(row.status, (s = new Set()));
    s.add(row);
  }

  attrsAdd(row: VisRow): void {
    const attrs = row.attrs;
    if (!attrs) return;
    for (const name in attrs) {
      const v = attrs[name];
      if (typeof v !== 'string' && !Array.isArray(v)) continue;
      let values = this.byAttr.get(name);
      if (!values) this.byAttr.set(name, (values = new Map()));
      if (typeof v === 'string') bucketAdd(values, v, row);
      else for (const x of v) bucketAdd(values, x, row);
    }
  }

  attrsDelete(row: VisRow): void {
    const attrs = row.attrs;
    if (!attrs) return;
    for (const name in attrs) {
      const v = attrs[name];
      const values = this.byAttr.get(name);
      if (!values) continue;
      if (typeof v === 'string') bucketDelete(values, v, row);
      else if (Array.isArray(v)) for (const x of v) bucketDelete(values, x, row);
    }
  }

  /** All rows in ascending start order, removed ones dropped. */
  sorted(): VisRow[] {
    if (this.dead > 0 && this.dead * 4 >= this.order.length) {
      this.order = this.order.filter((r) => r.status !== UNSPECIFIED);
      this.dead = 0;
    }
    if (this.unsorted) {
      this.order.sort(startOrder);
      this.unsorted = false;
    }
    return this.order;
  }
}

/** The parsed form of a page token: the previous page's last row's sort keys. */
interface After {
  keys: Key[];
  startTime: number;
  runId: string;
}

export class Visibility {
  private readonly spaces = new Map<string, NamespaceIndex>();
  private readonly registered = new Map<string, ValueType>();

  constructor(
    /** The run ids of a workflow id, oldest first (the store's chains: no second index of workflow ids). */
    private readonly runIdsOf: (namespace: string, workflowId: string) => string[],
  ) {}

  private space(namespace: string): NamespaceIndex {
    let ns = this.spaces.get(namespace);
    if (!ns) {
      ns = new NamespaceIndex();
      this.spaces.set(namespace, ns);
    }
    return ns;
  }

  /** A custom search attribute known in every namespace before any run sets it (the dev server's `--search-attribute`). */
  register(name: string, type: ValueType): void {
    if (!isSystemAttribute(name)) this.registered.set(name, type);
  }

  /** Search attributes a namespace knows: system ones, predefined ones, custom ones registered or seen. */
  attributes(namespace: string): Map<string, ValueType> {
    const out = new Map<string, ValueType>(systemAttributeTypes());
    for (const [k, v] of predefinedAttributes) out.set(k, v);
    for (const [k, v] of this.registered) out.set(k, v);
    for (const [k, v] of this.spaces.get(namespace)?.types ?? []) out.set(k, v);
    return out;
  }

  private typeOf(ns: NamespaceIndex | undefined, name: string): ValueType | undefined {
    return ns?.types.get(name) ?? this.registered.get(name) ?? predefinedAttributes.get(name);
  }

  /** Adds a run's row, or brings it up to date (status, close time, search attributes). */
  put(run: IndexedRun): void {
    const ns = this.space(run.namespace);
    const attrs = this.decodeAttrs(ns, run.searchAttributes);
    const row = ns.rows.get(run.runId);
    if (!row) {
      ns.add({
        runId: run.runId,
        workflowId: run.workflowId,
        type: ns.intern(run.workflowType),
        queue: ns.intern(run.taskQueue),
        status: run.status,
        startTime: run.startTime,
        closeTime: run.closeTime,
        executionTime: run.executionTime,
        parentWorkflowId: run.parent?.workflowId ?? null,
        parentRunId: run.parent?.runId ?? null,
        attrs,
      });
      return;
    }
    if (row.status !== run.status) {
      ns.byStatus.get(row.status)?.delete(row);
      row.status = run.status;
      ns.statusAdd(row);
    }
    row.closeTime = run.closeTime;
    if (!sameAttrs(row.attrs, attrs)) {
      ns.attrsDelete(row);
      row.attrs = attrs;
      ns.attrsAdd(row);
    }
  }

  remove(namespace: string, runId: string): void {
    const ns = this.spaces.get(namespace);
    const row = ns?.rows.get(runId);
    if (ns && row) ns.remove(row);
  }

  private decodeAttrs(
    ns: NamespaceIndex,
    sa: temporal.api.common.v1.ISearchAttributes,
  ): Record<string, AttrValue> | null {
    const fields = sa.indexedFields;
    if (!fields) return null;
    let out: Record<string, AttrValue> | null = null;
    for (const name in fields) {
      const known = this.typeOf(ns, name);
      const decoded = decodeAttribute(fields[name], known);
      if (!decoded) continue;
      // The first type seen names the attribute's type in this namespace (the real server's are registered).
      if (!known && !isSystemAttribute(name)) ns.types.set(name, decoded.type);
      (out ??= {})[name] = decoded.value;
    }
    return out;
  }

  private parse(namespace: string, query: string): ReturnType<typeof parseQuery> {
    const ns = this.spaces.get(namespace);
    return parseQuery(query, (name) => this.typeOf(ns, name));
  }

  // ---------------------------------------------------------------- planning

  /**
   * The rows an index gives for `e`: a superset of its matches, or undefined when no index
   * narrows it (the caller then walks every row). AND takes its most selective side.
   */
  private candidates(
    ns: NamespaceIndex,
    namespace: string,
    e: Expr,
  ): { rows: () => Iterable<VisRow>; size: number } | undefined {
    switch (e.k) {
      case 'cmp':
        return e.op === '=' ? this.lookup(ns, namespace, e.col, [e.v]) : undefined;
      case 'in':
        return e.not ? undefined : this.lookup(ns, namespace, e.col, e.vs);
      case 'and': {
        const l = this.candidates(ns, namespace, e.l);
        const r = this.candidates(ns, namespace, e.r);
        if (!l) return r;
        if (!r) return l;
        return l.size <= r.size ? l : r;
      }
      case 'or': {
        const l = this.candidates(ns, namespace, e.l);
        const r = l && this.candidates(ns, namespace, e.r);
        if (!l || !r) return undefined;
        return { rows: () => new Set([...l.rows(), ...r.rows()]), size: l.size + r.size };
      }
      default:
        return undefined;
    }
  }

  private lookup(
    ns: NamespaceIndex,
    namespace: string,
    col: Column,
    values: (string | number | boolean)[],
  ): { rows: () => Iterable<VisRow>; size: number } | undefined {
    const distinct = [...new Set(values)];
    let get: (v: string | number | boolean) => VisRow[];
    let size: (v: string | number | boolean) => number;
    switch (col.key) {
      case 'RunId':
        get = (v) => {
          const r = ns.rows.get(String(v));
          return r ? [r] : [];
        };
        size = (v) => (ns.rows.has(String(v)) ? 1 : 0);
        break;
      case 'WorkflowId':
        get = (v) => this.runIdsOf(namespace, String(v)).flatMap((id) => ns.rows.get(id) ?? []);
        size = (v) => this.runIdsOf(namespace, String(v)).length;
        break;
      case 'WorkflowType':
        get = (v) => bucketRows(ns.byType.get(String(v)));
        size = (v) => bucketSize(ns.byType.get(String(v)));
        break;
      case 'TaskQueue':
        get = (v) => bucketRows(ns.byQueue.get(String(v)));
        size = (v) => bucketSize(ns.byQueue.get(String(v)));
        break;
      case 'ExecutionStatus':
        get = (v) => [...(ns.byStatus.get(Number(v)) ?? [])];
        size = (v) => ns.byStatus.get(Number(v))?.size ?? 0;
        break;
      default: {
        if (col.type !== 'Keyword' && col.type !== 'KeywordList') return undefined;
        const values = ns.byAttr.get(col.name);
        get = (v) => bucketRows(values?.get(String(v)));
        size = (v) => bucketSize(values?.get(String(v)));
      }
    }
    let total = 0;
    for (const v of distinct) total += size(v);
    return {
      size: total,
      rows: () => (distinct.length === 1 ? get(distinct[0]) : new Set(distinct.flatMap(get))),
    };
  }

  // ---------------------------------------------------------------- list and count

  /** One page of a list, in the query's order (default: newest start first, then run id). */
  list(namespace: string, query: string, pageSize: number, token: Uint8Array | null | undefined): ListPage {
    const q = this.parse(namespace, query);
    if (q.groupBy) throw invalidArgument("invalid query: operation is not supported: 'GROUP BY' clause");
    const ns = this.spaces.get(namespace);
    if (!ns) return { rows: [], nextPageToken: Buffer.alloc(0) };
    const sig = orderSignature(q.orderBy);
    const after = parseToken(token, sig, q.orderBy.length);
    const where = q.where;
    const match = (r: VisRow): boolean => r.status !== UNSPECIFIED && (where === null || evaluate(where, r) === true);
    const cand = where ? this.candidates(ns, namespace, where) : undefined;
    const defaultOrder =
      q.orderBy.length === 0 || (q.orderBy.length === 1 && q.orderBy[0].col.name === 'StartTime' && q.orderBy[0].desc);
    const page: VisRow[] = [];
    let more = false;
    if (defaultOrder && (!cand || cand.size > SORT_LIMIT)) {
      // Walk every row from the newest (or from the token's row), stopping one past the page.
      const all = ns.sorted();
      let i = all.length - 1;
      if (after) {
        const probe = { startTime: after.startTime, runId: after.runId } as VisRow;
        let lo = 0;
        let hi = all.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (startOrder(all[mid], probe) < 0) lo = mid + 1;
          else hi = mid;
        }
        i = lo - 1;
      }
      for (; i >= 0; i--) {
        const r = all[i];
        if (!match(r)) continue;
        if (page.length === pageSize) {
          more = true;
          break;
        }
        page.push(r);
      }
    } else {
      const rows = cand ? [...cand.rows()] : ns.sorted();
      const compare = rowComparator(q.orderBy);
      let hits = rows.filter(match);
      if (after) {
        const keysOf = (r: VisRow): Key[] => q.orderBy.map((t) => scalar(t.col.get(r)));
        hits = hits.filter((r) => compareToAfter(keysOf(r), r, after, q.orderBy) > 0);
      }
      hits.sort(compare);
      more = hits.length > pageSize;
      page.push(...hits.slice(0, pageSize));
    }
    const last = page[page.length - 1];
    const next =
      more && last
        ? Buffer.from(JSON.stringify([sig, q.orderBy.map((t) => scalar(t.col.get(last))), last.startTime, last.runId]))
        : Buffer.alloc(0);
    return { rows: page, nextPageToken: next };
  }

  /** Every matching row in list order (tests and diagnostics). */
  all(namespace: string, query: string): VisRow[] {
    const out: VisRow[] = [];
    let token: Buffer | undefined;
    do {
      const page = this.list(namespace, query, 10_000, token);
      out.push(...page.rows);
      token = page.nextPageToken.length > 0 ? page.nextPageToken : undefined;
    } while (token);
    return out;
  }

  /** CountWorkflowExecutions, with `GROUP BY ExecutionStatus` answered as groups of status counts. */
  count(namespace: string, query: string): CountResult {
    const q = this.parse(namespace, query);
    const ns = this.spaces.get(namespace);
    if (!ns) return q.groupBy ? { count: 0, groups: [] } : { count: 0 };
    const where = q.where;
    const cand = where ? this.candidates(ns, namespace, where) : undefined;
    if (q.groupBy) {
      const groups = new Map<number, number>();
      if (!where) {
        for (const [status, rows] of ns.byStatus) if (rows.size > 0) groups.set(status, rows.size);
      } else {
        for (const r of cand ? cand.rows() : ns.rows.values()) {
          if (r.status !== UNSPECIFIED && evaluate(where, r) === true)
            groups.set(r.status, (groups.get(r.status) ?? 0) + 1);
        }
      }
      const list = [...groups]
        .filter(([s]) => statusNames.has(s))
        .sort((a, b) => a[0] - b[0])
        .map(([status, count]) => ({ status, count }));
      return { count: list.reduce((n, g) => n + g.count, 0), groups: list };
    }
    if (!where) return { count: ns.rows.size };
    // One indexed equality is its own answer; anything else is evaluated on the candidates.
    if (cand && where.k === 'cmp' && where.col.key && where.col.key !== 'WorkflowId') return { count: cand.size };
    let n = 0;
    for (const r of cand ? cand.rows() : ns.rows.values())
      if (r.status !== UNSPECIFIED && evaluate(where, r) === true) n++;
    return { count: n };
  }
}

function sameAttrs(a: Record<string, AttrValue> | null, b: Record<string, AttrValue> | null): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => {
    const x = a[k];
    const y = b[k];
    return Array.isArray(x) && Array.isArray(y) ? x.length === y.length && x.every((v, i) => v === y[i]) : x === y;
  });
}

function orderSignature(orderBy: OrderTerm[]): string {
  return orderBy.map((t) => `${t.col.name}:${t.desc ? 'd' : 'a'}`).join(',');
}

/** The ORDER BY terms, then newest start first and run id, so every order is total (keyset pages). */
function rowComparator(orderBy: OrderTerm[]): (a: VisRow, b: VisRow) => number {
  return (a, b) => {
    for (const t of orderBy) {
      const c = compareKey(scalar(t.col.get(a)), scalar(t.col.get(b)), t.desc);
      if (c !== 0) return c;
    }
    return -startOrder(a, b);
  };
}

function compareToAfter(keys: Key[], r: VisRow, after: After, orderBy: OrderTerm[]): number {
  for (let i = 0; i < orderBy.length; i++) {
    const c = compareKey(keys[i], after.keys[i], orderBy[i].desc);
    if (c !== 0) return c;
  }
  return -startOrder(r, { startTime: after.startTime, runId: after.runId } as VisRow);
}

function parseToken(token: Uint8Array | null | undefined, sig: string, nKeys: number): After | undefined {
  if (!token || token.length === 0) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(token).toString('utf8'));
  } catch {
    throw invalidArgument('Malformed next page token');
  }
  if (
    !Array.isArray(v) ||
    v.length !== 4 ||
    v[0] !== sig ||
    !Array.isArray(v[1]) ||
    v[1].length !== nKeys ||
    typeof v[2] !== 'number' ||
    typeof v[3] !== 'string'
  ) {
    throw invalidArgument('Malformed next page token');
  }
  return { keys: v[1] as Key[], startTime: v[2], runId: v[3] };
}
