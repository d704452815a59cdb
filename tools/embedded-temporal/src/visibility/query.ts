/**
 * The list filter language of ListWorkflowExecutions / CountWorkflowExecutions (README,
 * "Visibility"): a tokenizer, a recursive-descent parser to an AST, the typing of that AST
 * against the search attributes a namespace knows, and its evaluation on one visibility row.
 *
 * The grammar is the SQL WHERE subset the real server accepts (docs.temporal.io "List Filter";
 * temporalio/temporal common/persistence/visibility/store/query): comparisons, IN, BETWEEN,
 * STARTS_WITH, IS [NOT] NULL, AND/OR/NOT and parentheses, then an optional GROUP BY and ORDER BY.
 * Errors read as the real server's (`invalid query: …`, INVALID_ARGUMENT), so a client or the UI
 * shows the same text against either server.
 */
import { invalidArgument, type RpcError } from '../errors';
import { WorkflowExecutionStatus } from '../proto';

// ---------------------------------------------------------------- types

/** Search attribute value types, named as the real server prints them. */
export type ValueType = 'Keyword' | 'KeywordList' | 'Text' | 'Int' | 'Double' | 'Bool' | 'Datetime';

/** What a filter reads of one run (src/visibility/index.ts keeps one per run). */
export interface VisRow {
  readonly runId: string;
  readonly workflowId: string;
  readonly type: string;
  readonly queue: string;
  status: number;
  readonly startTime: number;
  /** 0 while open. */
  closeTime: number;
  readonly executionTime: number;
  readonly parentWorkflowId: string | null;
  readonly parentRunId: string | null;
  /** Custom search attributes, decoded: Keyword/Text → string, KeywordList → string[], Datetime → ms. */
  attrs: Record<string, AttrValue> | null;
}

export type AttrValue = string | string[] | number | boolean;

/** A column the query names, resolved: its type and how to read it from a row (null = no value). */
export interface Column {
  readonly name: string;
  readonly type: ValueType;
  /** The system attribute ExecutionStatus: values are status names, compared as enum numbers. */
  readonly status?: true;
  /** Indexed system columns the planner can look up (src/visibility/index.ts). */
  readonly key?: 'WorkflowId' | 'RunId' | 'WorkflowType' | 'TaskQueue' | 'ExecutionStatus';
  get(row: VisRow): AttrValue | null;
}

export type CmpOp = '=' | '!=' | '<' | '<=' | '>' | '>=';
/** A typed literal: string (Keyword, Text, KeywordList), number (Int, Double, Datetime in ms, ExecutionStatus), boolean. */
export type Literal = string | number | boolean;

export type Expr =
  | { k: 'and' | 'or'; l: Expr; r: Expr }
  | { k: 'not'; e: Expr }
  | { k: 'cmp'; col: Column; op: CmpOp; v: Literal }
  | { k: 'in'; col: Column; vs: Literal[]; not: boolean }
  | { k: 'between'; col: Column; lo: Literal; hi: Literal; not: boolean }
  | { k: 'prefix'; col: Column; v: string; not: boolean }
  | { k: 'null'; col: Column; not: boolean };

export interface OrderTerm {
  col: Column;
  desc: boolean;
}

export interface ParsedQuery {
  where: Expr | null;
  groupBy: Column | null;
  orderBy: OrderTerm[];
}

/** The custom search attributes a namespace knows, by name. */
export type Schema = (name: string) => ValueType | undefined;

const fail = (msg: string): RpcError => invalidArgument(`invalid query: ${msg}`);
const NOT_SUPPORTED = 'operation is not supported';
const INVALID = 'invalid expression';

// ---------------------------------------------------------------- system attributes

const S = WorkflowExecutionStatus;
/** Status names as the real server's enum shorthand (`ExecutionStatus = 'Running'`). */
export const statusNames: ReadonlyMap<number, string> = new Map([
  [S.WORKFLOW_EXECUTION_STATUS_RUNNING, 'Running'],
  [S.WORKFLOW_EXECUTION_STATUS_COMPLETED, 'Completed'],
  [S.WORKFLOW_EXECUTION_STATUS_FAILED, 'Failed'],
  [S.WORKFLOW_EXECUTION_STATUS_CANCELED, 'Canceled'],
  [S.WORKFLOW_EXECUTION_STATUS_TERMINATED, 'Terminated'],
  [S.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW, 'ContinuedAsNew'],
  [S.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, 'TimedOut'],
]);
const statusByName = new Map<string, number>();
for (const [n, name] of statusNames) {
  statusByName.set(name.toLowerCase(), n);
  statusByName.set(`workflow_execution_status_${name.replace(/([a-z])([A-Z])/g, '$1_$2')}`.toLowerCase(), n);
}
statusByName.set('cancelled', S.WORKFLOW_EXECUTION_STATUS_CANCELED);

const nullIfZero = (t: number): number | null => (t === 0 ? null : t);

const systemColumns = new Map<string, Column>(
  (
    [
      { name: 'WorkflowId', type: 'Keyword', key: 'WorkflowId', get: (r) => r.workflowId },
      { name: 'RunId', type: 'Keyword', key: 'RunId', get: (r) => r.runId },
      { name: 'WorkflowType', type: 'Keyword', key: 'WorkflowType', get: (r) => r.type },
      { name: 'TaskQueue', type: 'Keyword', key: 'TaskQueue', get: (r) => r.queue },
      { name: 'ExecutionStatus', type: 'Keyword', status: true, key: 'ExecutionStatus', get: (r) => r.status },
      { name: 'StartTime', type: 'Datetime', get: (r) => r.startTime },
      { name: 'CloseTime', type: 'Datetime', get: (r) => nullIfZero(r.closeTime) },
      { name: 'ExecutionTime', type: 'Datetime', get: (r) => r.executionTime },
      { name: 'ParentWorkflowId', type: 'Keyword', get: (r) => r.parentWorkflowId },
      { name: 'ParentRunId', type: 'Keyword', get: (r) => r.parentRunId },
      // Set by the real server on its own scheduler and batcher runs, which this one never runs: no run
      // here has one. The UI's schedules page counts running scheduler runs by it (README "Web UI").
      { name: 'TemporalNamespaceDivision', type: 'Keyword', get: () => null },
    ] satisfies Column[]
  ).map((c) => [c.name, c]),
);

/** System attributes of the real server that this one does not keep per run (README "Visibility"). */
const unsupportedSystem = new Set([
  'ExecutionDuration',
  'HistoryLength',
  'HistorySizeBytes',
  'StateTransitionCount',
  'RootWorkflowId',
  'RootRunId',
  'BatcherUser',
  'BatcherNamespace',
  'BinaryChecksums',
  'BuildIds',
  'TemporalSchedulePaused',
  'TemporalScheduledById',
  'TemporalScheduledStartTime',
  'TemporalWorkerDeployment',
  'TemporalWorkerDeploymentVersion',
  'TemporalWorkflowVersioningBehavior',
  'TemporalPauseInfo',
  'TemporalReportedProblems',
]);

/** Predefined attributes every namespace knows (the SDK upserts TemporalChangeVersion for patches). */
export const predefinedAttributes: ReadonlyMap<string, ValueType> = new Map([['TemporalChangeVersion', 'KeywordList']]);

export function isSystemAttribute(name: string): boolean {
  return systemColumns.has(name) || unsupportedSystem.has(name);
}

/** System attributes and their types, as GetSearchAttributes lists them. */
export function systemAttributeTypes(): [string, ValueType][] {
  return [...systemColumns.values()].map((c) => [c.name, c.type]);
}

// ---------------------------------------------------------------- tokenizer

type TokKind = 'ident' | 'str' | 'num' | 'op' | 'punct' | 'kw' | 'eof';
interface Token {
  kind: TokKind;
  /** Identifier (unquoted), string contents (unescaped), number text, operator, punctuation, upper-cased keyword. */
  text: string;
  /** Offset just past the token in the query (1-based position as the real parser reports it). */
  end: number;
  /** The token as written, for error messages. */
  raw: string;
}

const keywords = new Set([
  'AND',
  'OR',
  'NOT',
  'IN',
  'BETWEEN',
  'IS',
  'NULL',
  'STARTS_WITH',
  'ORDER',
  'GROUP',
  'BY',
  'ASC',
  'DESC',
  'TRUE',
  'FALSE',
  'LIKE',
  'LIMIT',
  'SELECT',
  'FROM',
  'WHERE',
  'UNION',
  'HAVING',
  'OFFSET',
]);

function syntaxError(tok: Token | { end: number; raw: string; kind: TokKind }): RpcError {
  return fail(
    tok.kind === 'eof'
      ? `malformed SQL query: syntax error at position ${tok.end}`
      : `malformed SQL query: syntax error at position ${tok.end} near '${tok.raw}'`,
  );
}

export function tokenize(q: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = q.length;
  while (i < n) {
    const c = q[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    const start = i;
    if (/[A-Za-z_]/.test(c)) {
      while (i < n && /[A-Za-z0-9_]/.test(q[i])) i++;
      const word = q.slice(start, i);
      const upper = word.toUpperCase();
      out.push(
        keywords.has(upper)
          ? { kind: 'kw', text: upper, end: i, raw: word }
          : { kind: 'ident', text: word, end: i, raw: word },
      );
      continue;
    }
    if (c === '`') {
      const close = q.indexOf('`', i + 1);
      if (close < 0) throw syntaxError({ kind: 'punct', end: n, raw: q.slice(start) });
      i = close + 1;
      const name = q.slice(start + 1, close);
      if (!name) throw syntaxError({ kind: 'punct', end: i, raw: '``' });
      out.push({ kind: 'ident', text: name, end: i, raw: q.slice(start, i) });
      continue;
    }
    if (c === "'" || c === '"') {
      // Both quotes delimit strings (as in the real server's MySQL-dialect parser); a quote is
      // escaped by doubling it or with a backslash.
      let value = '';
      i++;
      for (;;) {
        if (i >= n) throw syntaxError({ kind: 'str', end: n, raw: q.slice(start) });
        const ch = q[i];
        if (ch === '\\' && i + 1 < n) {
          const e = q[i + 1];
          value += e === 'n' ? '\n' : e === 't' ? '\t' : e === 'r' ? '\r' : e === '0' ? '\0' : e;
          i += 2;
        } else if (ch === c) {
          if (q[i + 1] === c) {
            value += c;
            i += 2;
          } else {
            i++;
            break;
          }
        } else {
          value += ch;
          i++;
        }
      }
      out.push({ kind: 'str', text: value, end: i, raw: q.slice(start, i) });
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(q[i + 1] ?? ''))) {
      while (i < n && /[0-9]/.test(q[i])) i++;
      if (q[i] === '.') {
        i++;
        while (i < n && /[0-9]/.test(q[i])) i++;
      }
      if ((q[i] === 'e' || q[i] === 'E') && /[-+0-9]/.test(q[i + 1] ?? '')) {
        i += 2;
        while (i < n && /[0-9]/.test(q[i])) i++;
      }
      if (i < n && /[A-Za-z_]/.test(q[i])) throw syntaxError({ kind: 'num', end: i + 1, raw: q.slice(start, i + 1) });
      out.push({ kind: 'num', text: q.slice(start, i), end: i, raw: q.slice(start, i) });
      continue;
    }
    const two = q.slice(i, i + 2);
    if (two === '!=' || two === '<>' || two === '<=' || two === '>=') {
      i += 2;
      out.push({ kind: 'op', text: two === '<>' ? '!=' : two, end: i, raw: two });
      continue;
    }
    if (c === '=' || c === '<' || c === '>') {
      i++;
      out.push({ kind: 'op', text: c, end: i, raw: c });
      continue;
    }
    if (c === '(' || c === ')' || c === ',' || c === '-' || c === '+') {
      i++;
      out.push({ kind: 'punct', text: c, end: i, raw: c });
      continue;
    }
    throw syntaxError({ kind: 'punct', end: i + 1, raw: c });
  }
  out.push({ kind: 'eof', text: '', end: n + 1, raw: '' });
  return out;
}

// ---------------------------------------------------------------- parser (untyped AST)

type RawValue =
  | { t: 'str'; v: string; raw: string }
  | { t: 'num'; v: number; int: boolean; raw: string }
  | { t: 'bool'; v: boolean; raw: string };

type RawExpr =
  | { k: 'and' | 'or'; l: RawExpr; r: RawExpr }
  | { k: 'not'; e: RawExpr }
  | { k: 'cmp'; col: string; op: string; v: RawValue; text: string }
  | { k: 'in'; col: string; vs: RawValue[]; not: boolean }
  | { k: 'between'; col: string; lo: RawValue; hi: RawValue; not: boolean }
  | { k: 'prefix'; col: string; v: RawValue; not: boolean }
  | { k: 'null'; col: string; not: boolean };

interface RawQuery {
  where: RawExpr | null;
  groupBy: string[];
  orderBy: { col: string; desc: boolean }[];
}

class Parser {
  private pos = 0;

  constructor(
    private readonly toks: Token[],
    private readonly text: string,
  ) {}

  private peek(): Token {
    return this.toks[this.pos];
  }
  private next(): Token {
    return this.toks[this.pos++];
  }
  private isKw(word: string): boolean {
    const t = this.peek();
    return t.kind === 'kw' && t.text === word;
  }
  private acceptKw(word: string): boolean {
    if (!this.isKw(word)) return false;
    this.pos++;
    return true;
  }
  private expectKw(word: string): void {
    if (!this.acceptKw(word)) throw syntaxError(this.peek());
  }
  private acceptPunct(p: string): boolean {
    const t = this.peek();
    if (t.kind !== 'punct' || t.text !== p) return false;
    this.pos++;
    return true;
  }
  private expectPunct(p: string): void {
    if (!this.acceptPunct(p)) throw syntaxError(this.peek());
  }

  query(): RawQuery {
    let where: RawExpr | null = null;
    if (!this.isKw('ORDER') && !this.isKw('GROUP') && this.peek().kind !== 'eof') where = this.or();
    const groupBy: string[] = [];
    if (this.acceptKw('GROUP')) {
      this.expectKw('BY');
      do groupBy.push(this.column());
      while (this.acceptPunct(','));
    }
    const orderBy: RawQuery['orderBy'] = [];
    if (this.acceptKw('ORDER')) {
      this.expectKw('BY');
      do {
        const col = this.column();
        const desc = this.acceptKw('DESC');
        if (!desc) this.acceptKw('ASC');
        orderBy.push({ col, desc });
      } while (this.acceptPunct(','));
    }
    if (this.isKw('LIMIT')) throw fail(`${NOT_SUPPORTED}: 'LIMIT' clause`);
    if (this.peek().kind !== 'eof') throw syntaxError(this.peek());
    return { where, groupBy, orderBy };
  }

  private or(): RawExpr {
    let l = this.and();
    while (this.acceptKw('OR')) l = { k: 'or', l, r: this.and() };
    return l;
  }

  private and(): RawExpr {
    let l = this.not();
    while (this.acceptKw('AND')) l = { k: 'and', l, r: this.not() };
    return l;
  }

  private not(): RawExpr {
    if (this.acceptKw('NOT')) return { k: 'not', e: this.not() };
    if (this.acceptPunct('(')) {
      const e = this.or();
      this.expectPunct(')');
      return e;
    }
    return this.predicate();
  }

  private column(): string {
    const t = this.next();
    if (t.kind !== 'ident') throw syntaxError(t);
    return t.text;
  }

  private predicate(): RawExpr {
    const first = this.peek();
    if (first.kind !== 'ident') {
      if (first.kind === 'str' || first.kind === 'num') {
        throw fail(`${INVALID}: must be a column name but was ${first.raw}`);
      }
      throw syntaxError(first);
    }
    const start = first.end - first.raw.length;
    const col = this.column();
    const t = this.peek();
    if (t.kind === 'op') {
      this.pos++;
      const v = this.value();
      return { k: 'cmp', col, op: t.text, v, text: this.text.slice(start, this.toks[this.pos - 1].end).trim() };
    }
    if (this.acceptKw('IS')) {
      const not = this.acceptKw('NOT');
      if (!this.acceptKw('NULL')) {
        throw fail(`${INVALID}: 'IS' operator can only be used as 'IS NULL' or 'IS NOT NULL'`);
      }
      return { k: 'null', col, not };
    }
    const not = this.acceptKw('NOT');
    if (this.acceptKw('IN')) {
      this.expectPunct('(');
      const vs: RawValue[] = [];
      do vs.push(this.value());
      while (this.acceptPunct(','));
      this.expectPunct(')');
      return { k: 'in', col, vs, not };
    }
    if (this.acceptKw('BETWEEN')) {
      const lo = this.value();
      this.expectKw('AND');
      const hi = this.value();
      return { k: 'between', col, lo, hi, not };
    }
    if (this.acceptKw('STARTS_WITH')) return { k: 'prefix', col, v: this.value(), not };
    if (this.isKw('LIKE'))
      throw fail(`${NOT_SUPPORTED}: operator '${not ? 'NOT LIKE' : 'LIKE'}' on search attribute ${col}`);
    const after = this.peek();
    if (
      !not &&
      (after.kind === 'eof' ||
        (after.kind === 'punct' && after.text === ')') ||
        (after.kind === 'kw' && ['AND', 'OR', 'ORDER', 'GROUP'].includes(after.text)))
    ) {
      throw fail(`${INVALID}: incomplete expression`);
    }
    throw syntaxError(this.peek());
  }

  private value(): RawValue {
    const t = this.next();
    if (t.kind === 'str') return { t: 'str', v: t.text, raw: t.raw };
    if (t.kind === 'kw' && (t.text === 'TRUE' || t.text === 'FALSE'))
      return { t: 'bool', v: t.text === 'TRUE', raw: t.raw };
    let sign = 1;
    let num = t;
    if (t.kind === 'punct' && (t.text === '-' || t.text === '+')) {
      sign = t.text === '-' ? -1 : 1;
      num = this.next();
    }
    if (num.kind === 'num') {
      return {
        t: 'num',
        v: sign * Number(num.text),
        int: /^[0-9]+$/.test(num.text),
        raw: (sign < 0 ? '-' : '') + num.raw,
      };
    }
    if (num.kind === 'ident') {
      throw fail(
        `${NOT_SUPPORTED}: column name on the right side of comparison expression (did you forget to quote '${num.raw}'?)`,
      );
    }
    throw syntaxError(num);
  }
}

// ---------------------------------------------------------------- typing

function rawType(v: RawValue): string {
  return v.t === 'str' ? 'string' : v.t === 'bool' ? 'bool' : v.int ? 'int64' : 'float64';
}

function valueTypeError(col: Column, v: RawValue): RpcError {
  return fail(
    `${INVALID}: invalid value type for search attribute ${col.name} of type ${col.type}: ${v.raw} (type: ${rawType(v)})`,
  );
}

/** RFC 3339 (fraction to the nanosecond) to epoch milliseconds, fraction kept; NaN if not one. */
export function parseRfc3339(s: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/.exec(s);
  if (!m) return NaN;
  const base = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}${m[8].toUpperCase() === 'Z' ? 'Z' : m[8]}`);
  if (Number.isNaN(base)) return NaN;
  return base + (m[7] ? Number(m[7]) * 1000 : 0);
}

function literal(col: Column, v: RawValue): Literal {
  if (col.status) {
    if (v.t === 'str') {
      const s = statusByName.get(v.v.toLowerCase());
      if (s === undefined) throw fail(`${INVALID}: invalid ExecutionStatus value '${v.v}'`);
      return s;
    }
    if (v.t === 'num' && v.int && statusNames.has(v.v)) return v.v;
    if (v.t === 'num') throw fail(`${INVALID}: invalid ExecutionStatus value ${v.raw}`);
    throw fail(`${INVALID}: unexpected value type bool for search attribute ExecutionStatus`);
  }
  switch (col.type) {
    case 'Keyword':
    case 'KeywordList':
      if (v.t !== 'str') throw valueTypeError(col, v);
      return v.v;
    case 'Text':
      if (v.t !== 'str') throw valueTypeError(col, v);
      if (!v.v.trim()) throw fail(`${INVALID}: no tokens found filtering on Text type search attribute ${col.name}`);
      return v.v;
    case 'Int':
    case 'Double':
      if (v.t !== 'num') throw valueTypeError(col, v);
      return v.v;
    case 'Bool':
      if (v.t !== 'bool') throw valueTypeError(col, v);
      return v.v;
    case 'Datetime': {
      // As the real server: an RFC 3339 string, or an integer of Unix nanoseconds.
      if (v.t === 'num' && v.int) return v.v / 1e6;
      if (v.t !== 'str') throw valueTypeError(col, v);
      const ms = parseRfc3339(v.v);
      if (Number.isNaN(ms)) throw fail(`${INVALID}: unable to parse datetime '${v.v}'`);
      return ms;
    }
  }
}

const comparisonOps: Record<ValueType, ReadonlySet<string>> = {
  Keyword: new Set(['=', '!=', '<', '<=', '>', '>=']),
  KeywordList: new Set(['=', '!=']),
  Text: new Set(['=', '!=']),
  Int: new Set(['=', '!=', '<', '<=', '>', '>=']),
  Double: new Set(['=', '!=', '<', '<=', '>', '>=']),
  Datetime: new Set(['=', '!=', '<', '<=', '>', '>=']),
  Bool: new Set(['=', '!=']),
};

function opNotSupported(col: Column, op: string): RpcError {
  return fail(
    `${NOT_SUPPORTED}: operator '${op.toUpperCase()}' not supported for ${col.type} type search attribute '${col.name}'`,
  );
}

function resolveColumn(name: string, schema: Schema): Column {
  const sys = systemColumns.get(name);
  if (sys) return sys;
  if (unsupportedSystem.has(name))
    throw fail(`${NOT_SUPPORTED}: filtering on search attribute ${name} (not kept by this server)`);
  const type = schema(name) ?? predefinedAttributes.get(name);
  if (!type) throw fail(`invalid search attribute: ${name}`);
  return { name, type, get: (r) => r.attrs?.[name] ?? null };
}

function typeExpr(e: RawExpr, schema: Schema): Expr {
  switch (e.k) {
    case 'and':
    case 'or':
      return { k: e.k, l: typeExpr(e.l, schema), r: typeExpr(e.r, schema) };
    case 'not':
      return { k: 'not', e: typeExpr(e.e, schema) };
    case 'cmp': {
      const col = resolveColumn(e.col, schema);
      const ops = col.status ? new Set(['=', '!=']) : comparisonOps[col.type];
      if (!ops.has(e.op)) throw opNotSupported(col, e.op);
      return { k: 'cmp', col, op: e.op as CmpOp, v: literal(col, e.v) };
    }
    case 'in': {
      const col = resolveColumn(e.col, schema);
      if (col.type === 'Text' || col.type === 'Bool') throw opNotSupported(col, e.not ? 'NOT IN' : 'IN');
      return { k: 'in', col, vs: e.vs.map((v) => literal(col, v)), not: e.not };
    }
    case 'between': {
      const col = resolveColumn(e.col, schema);
      if (col.status || !['Datetime', 'Double', 'Int', 'Keyword'].includes(col.type)) {
        throw fail(`${INVALID}: cannot do range condition on search attribute '${col.name}' of type ${col.type}`);
      }
      return { k: 'between', col, lo: literal(col, e.lo), hi: literal(col, e.hi), not: e.not };
    }
    case 'prefix': {
      const col = resolveColumn(e.col, schema);
      if (col.type !== 'Keyword' || col.status) throw opNotSupported(col, e.not ? 'NOT STARTS_WITH' : 'STARTS_WITH');
      const v = literal(col, e.v);
      return { k: 'prefix', col, v: String(v), not: e.not };
    }
    case 'null':
      return { k: 'null', col: resolveColumn(e.col, schema), not: e.not };
  }
}

/** Parses and types a list filter; throws INVALID_ARGUMENT (`invalid query: …`) as the real server. */
export function parseQuery(text: string, schema: Schema): ParsedQuery {
  const raw = new Parser(tokenize(text), text).query();
  const where = raw.where ? typeExpr(raw.where, schema) : null;
  if (raw.groupBy.length > 1) throw fail(`${NOT_SUPPORTED}: 'GROUP BY' clause supports only a single field`);
  let groupBy: Column | null = null;
  if (raw.groupBy.length === 1) {
    const col = resolveColumn(raw.groupBy[0], schema);
    if (!col.status)
      throw fail(`${NOT_SUPPORTED}: 'GROUP BY' clause is not supported for search attribute ${col.name}`);
    groupBy = col;
  }
  const orderBy = raw.orderBy.map(({ col: name, desc }) => {
    const col = resolveColumn(name, schema);
    if (col.type === 'Text' || col.type === 'KeywordList') {
      throw fail(`${NOT_SUPPORTED}: unable to sort by search attribute type ${col.type}`);
    }
    return { col, desc };
  });
  return { where, groupBy, orderBy };
}

// ---------------------------------------------------------------- evaluation

/** Words of a Text value, as a search engine's standard analyzer splits them. */
function words(s: string): string[] {
  return s
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

function compare(a: Literal, b: Literal): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function cmp(op: CmpOp, c: number): boolean {
  switch (op) {
    case '=':
      return c === 0;
    case '!=':
      return c !== 0;
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
  }
}

/**
 * SQL's three-valued logic (the real dev server's store is SQLite): a comparison with a missing
 * value is unknown (null), NOT unknown is unknown, and a row matches only when the filter is true.
 */
export function evaluate(e: Expr, row: VisRow): boolean | null {
  switch (e.k) {
    case 'and': {
      const l = evaluate(e.l, row);
      if (l === false) return false;
      const r = evaluate(e.r, row);
      if (r === false) return false;
      return l === null || r === null ? null : true;
    }
    case 'or': {
      const l = evaluate(e.l, row);
      if (l === true) return true;
      const r = evaluate(e.r, row);
      if (r === true) return true;
      return l === null || r === null ? null : false;
    }
    case 'not': {
      const v = evaluate(e.e, row);
      return v === null ? null : !v;
    }
    case 'null': {
      const v = e.col.get(row);
      const isNull = v === null || (Array.isArray(v) && v.length === 0);
      return e.not ? !isNull : isNull;
    }
    case 'cmp': {
      const v = e.col.get(row);
      if (v === null) return null;
      if (Array.isArray(v)) {
        const has = v.includes(e.v as string);
        return e.op === '=' ? has : !has;
      }
      if (e.col.type === 'Text') {
        const want = words(String(e.v));
        const have = new Set(words(String(v)));
        const hit = want.some((w) => have.has(w));
        return e.op === '=' ? hit : !hit;
      }
      return cmp(e.op, compare(v, e.v));
    }
    case 'in': {
      const v = e.col.get(row);
      if (v === null) return null;
      const hit = Array.isArray(v) ? v.some((x) => e.vs.includes(x)) : e.vs.includes(v);
      return e.not ? !hit : hit;
    }
    case 'between': {
      const v = e.col.get(row);
      if (v === null || Array.isArray(v)) return null;
      const inside = compare(v, e.lo) >= 0 && compare(v, e.hi) <= 0;
      return e.not ? !inside : inside;
    }
    case 'prefix': {
      const v = e.col.get(row);
      if (typeof v !== 'string') return null;
      const hit = v.startsWith(e.v);
      return e.not ? !hit : hit;
    }
  }
}
