/**
 * HTTP routes derived from the `google.api.http` options that the SDK's compiled proto root
 * carries on each method (protobufjs keeps them in `method.parsedOptions`, one
 * `{"(google.api.http)": {get|post|put|patch|delete: template, body, additional_bindings}}`
 * entry; `additional_bindings` is one object or an array). No route is written by hand: a method
 * gains its HTTP form when the proto gives it one (README "HTTP API").
 *
 * Path templates (google/api/http.proto): literal segments, `*`, `**` (last only),
 * `{field.path}` and `{field.path=segments}`, and an optional `:verb`.
 */
import { camelCase, type RMethod, type RService } from './reflect';

type Part =
  | { kind: 'literal'; value: string }
  | { kind: 'star' }
  | { kind: 'starstar' }
  | { kind: 'var'; field: string[]; parts: Part[] };

export interface Route {
  service: string;
  method: string;
  httpMethod: string;
  template: string;
  /** "*" (whole body), a field name (lowerCamelCase) or undefined (no body). */
  body: string | undefined;
  parts: Part[];
  verb: string | undefined;
  /** Literal segments: the more, the more specific (preferred on overlap). */
  literals: number;
}

export interface RouteMatch {
  route: Route;
  /** Field path (lowerCamelCase segments) → decoded value. */
  params: { field: string[]; value: string }[];
}

const HTTP_VERBS = ['get', 'put', 'post', 'delete', 'patch'] as const;

interface HttpRule {
  get?: string;
  put?: string;
  post?: string;
  delete?: string;
  patch?: string;
  body?: string;
  additional_bindings?: HttpRule | HttpRule[];
}

function httpRules(m: RMethod): HttpRule[] {
  const out: HttpRule[] = [];
  for (const opt of m.parsedOptions ?? []) {
    const rule = opt['(google.api.http)'] as HttpRule | undefined;
    if (!rule) continue;
    out.push(rule);
    const extra = rule.additional_bindings;
    if (extra) out.push(...(Array.isArray(extra) ? extra : [extra]));
  }
  return out;
}

function parseSegments(text: string, template: string): Part[] {
  const parts: Part[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '{') {
      const close = text.indexOf('}', i);
      if (close < 0) throw new Error(`bad path template ${template}`);
      const inner = text.slice(i + 1, close);
      const eq = inner.indexOf('=');
      const field = (eq < 0 ? inner : inner.slice(0, eq)).split('.').map(camelCase);
      const sub = eq < 0 ? [{ kind: 'star' } as Part] : parseSegments(inner.slice(eq + 1), template);
      parts.push({ kind: 'var', field, parts: sub });
      i = close + 1;
    } else {
      let end = text.indexOf('/', i);
      if (end < 0) end = text.length;
      const seg = text.slice(i, end);
      parts.push(
        seg === '**' ? { kind: 'starstar' } : seg === '*' ? { kind: 'star' } : { kind: 'literal', value: seg },
      );
      i = end;
    }
    if (text[i] === '/') i++;
  }
  return parts;
}

function parseTemplate(template: string): { parts: Part[]; verb: string | undefined } {
  if (!template.startsWith('/')) throw new Error(`bad path template ${template}`);
  // The verb follows the last `:` outside braces.
  let verb: string | undefined;
  let path = template.slice(1);
  const lastClose = path.lastIndexOf('}');
  const colon = path.indexOf(':', lastClose + 1);
  if (colon >= 0) {
    verb = path.slice(colon + 1);
    path = path.slice(0, colon);
  }
  return { parts: parseSegments(path, template), verb };
}

function countLiterals(parts: Part[]): number {
  return parts.reduce((n, p) => n + (p.kind === 'literal' ? 1 : p.kind === 'var' ? countLiterals(p.parts) : 0), 0);
}

/** Every HTTP binding of the service's unary methods. */
export function routesOf(service: RService): Route[] {
  const out: Route[] = [];
  for (const [name, m] of Object.entries(service.methods)) {
    if (m.requestStream || m.responseStream) continue;
    for (const rule of httpRules(m)) {
      for (const verb of HTTP_VERBS) {
        const template = rule[verb];
        if (typeof template !== 'string') continue;
        const { parts, verb: customVerb } = parseTemplate(template);
        out.push({
          service: service.fullName.replace(/^\./, ''),
          method: name,
          httpMethod: verb.toUpperCase(),
          template,
          body: rule.body === '*' ? '*' : rule.body ? camelCase(rule.body) : undefined,
          parts,
          verb: customVerb,
          literals: countLiterals(parts),
        });
      }
    }
  }
  return out;
}

function decodeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Matches `parts` against `segs` from `at`; returns the index after the match or -1. */
function matchParts(parts: Part[], segs: string[], at: number, params: RouteMatch['params']): number {
  let i = at;
  for (const p of parts) {
    if (p.kind === 'literal') {
      if (segs[i] !== p.value) return -1;
      i++;
    } else if (p.kind === 'star') {
      if (i >= segs.length || segs[i] === '') return -1;
      i++;
    } else if (p.kind === 'starstar') {
      i = segs.length;
    } else {
      const start = i;
      const end = matchParts(p.parts, segs, i, params);
      if (end < 0) return -1;
      params.push({ field: p.field, value: segs.slice(start, end).map(decodeSegment).join('/') });
      i = end;
    }
  }
  return i;
}

/**
 * The route for a request path (its raw, still percent-encoded form), or why there is none:
 * 'not-found' (no template matches) or 'method' (templates match, none with this HTTP method),
 * as grpc-gateway tells 404 from 405. Each segment is percent-decoded after splitting, so a
 * workflow id with `/` in it travels as `%2F`.
 */
export function matchRoute(routes: Route[], httpMethod: string, rawPath: string): RouteMatch | 'not-found' | 'method' {
  if (!rawPath.startsWith('/')) return 'not-found';
  let best: RouteMatch | undefined;
  let pathMatched = false;
  for (const route of routes) {
    let path = rawPath.slice(1);
    if (route.verb !== undefined) {
      if (!path.endsWith(`:${route.verb}`)) continue;
      path = path.slice(0, -(route.verb.length + 1));
    }
    const segs = path.split('/');
    const params: RouteMatch['params'] = [];
    if (matchParts(route.parts, segs, 0, params) !== segs.length) continue;
    pathMatched = true;
    if (route.httpMethod !== httpMethod) continue;
    if (!best || route.literals > best.route.literals) best = { route, params };
  }
  return best ?? (pathMatched ? 'method' : 'not-found');
}
