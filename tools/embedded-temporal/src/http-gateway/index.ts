/**
 * The HTTP API beside the gRPC port (README "HTTP API"): what the Temporal server's grpc-gateway
 * serves and the official UI reads. HTTP/1.1 and JSON (node:http); each route, derived from the
 * proto's `google.api.http` options (routes.ts), decodes its JSON into the request message,
 * runs the very handler table the gRPC server runs (same handlers, same durable-commit wrapper,
 * through `invoke` in src/rpc/grpc.ts, in process) and answers the response message as proto3
 * JSON (json.ts). Errors answer as the gateway does: the HTTP status mapped from the gRPC code and
 * a body `{code, message, details: []}`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { status, type Status } from '../errors';
import type { Logger } from '../logger';
import { invoke, type CallContext, type UnaryMethod } from '../rpc/grpc';
import { enumFromJson, fromJson, JsonError, scalarFromJson, toJson, type Json, type JsonOptions } from './json';
import { fieldNamed, fieldType, isEnum, isType, root, type RType } from './reflect';
import { matchRoute, routesOf, type Route } from './routes';

/** As the real frontend: a request body is at most 4 MiB (gRPC's default receive size). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface HttpGatewayOptions {
  host: string;
  /** 0 = any free port. */
  port: number;
  /** The services' unary method tables exactly as the gRPC server was given them. */
  services: { name: string; methods: UnaryMethod[] }[];
  logger: Logger;
  /** For `GET /api/v1/settings`. */
  defaultNamespace: string;
  /**
   * Payloads in the gateway's shorthand unless `?noPayloadShorthand` (default). `false`: always the
   * long form `{metadata, data}`, as the UI's own server answers and the UI decodes (README "Web UI").
   */
  payloadShorthand?: boolean;
}

/**
 * The `Version` settings report: the UI server answers its own version, and the UI reads it to pick
 * request shapes (from 2.23.0 path parameters are encoded once, not twice; after 2.22 a signal's body
 * names `workflowExecution`). The @temporalio/ui release whose routes test/http-gateway-ui-routes.test.ts checks.
 */
export const UI_VERSION = '2.38.0';

export interface RunningHttpGateway {
  port: number;
  close(): Promise<void>;
}

interface Bound {
  route: Route;
  method: UnaryMethod;
  requestType: RType;
  responseType: RType;
}

/** grpc-gateway's `HTTPStatusFromCode`. */
export function httpStatusOf(code: number): number {
  switch (code) {
    case status.OK:
      return 200;
    case status.CANCELLED:
      return 499;
    case status.INVALID_ARGUMENT:
    case status.FAILED_PRECONDITION:
    case status.OUT_OF_RANGE:
      return 400;
    case status.DEADLINE_EXCEEDED:
      return 504;
    case status.NOT_FOUND:
      return 404;
    case status.ALREADY_EXISTS:
    case status.ABORTED:
      return 409;
    case status.PERMISSION_DENIED:
      return 403;
    case status.UNAUTHENTICATED:
      return 401;
    case status.RESOURCE_EXHAUSTED:
      return 429;
    case status.UNIMPLEMENTED:
      return 501;
    case status.UNAVAILABLE:
      return 503;
    default:
      return 500;
  }
}

class HttpCallError extends Error {
  constructor(
    readonly code: Status,
    message: string,
  ) {
    super(message);
  }
}

/** What the UI's own server answers at `/api/v1/settings` (temporalio/ui `server/server/api`): its Go field names. */
function settings(opts: HttpGatewayOptions): Json {
  return {
    Auth: {
      Enabled: false,
      Flow: '',
      ProviderURL: '',
      IssuerURL: '',
      AuthorizationURL: '',
      ClientID: '',
      CallbackURL: '',
      Scopes: null,
      Options: null,
    },
    BannerText: '',
    DefaultNamespace: opts.defaultNamespace,
    ShowTemporalSystemNamespace: false,
    FeedbackURL: '',
    NotifyOnNewVersion: false,
    Codec: { Endpoint: '', PassAccessToken: false, IncludeCredentials: false },
    Version: UI_VERSION,
    DisableWriteActions: false,
    WorkflowTerminateDisabled: false,
    WorkflowCancelDisabled: false,
    WorkflowSignalDisabled: false,
    // Neither reset nor batch operations exist on this server (README "HTTP API"): the UI hides them.
    WorkflowResetDisabled: true,
    BatchActionsDisabled: true,
    HideWorkflowQueryErrors: false,
  };
}

function readBody(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new HttpCallError(status.INVALID_ARGUMENT, `request body larger than ${MAX_BODY_BYTES} bytes`));
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseJson(text: string): Json {
  try {
    return JSON.parse(text) as Json;
  } catch (err) {
    throw new HttpCallError(
      status.INVALID_ARGUMENT,
      `request body is not JSON: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/**
 * Sets the field at `path` (lowerCamelCase or .proto names) of the request object from string
 * values (a path parameter or query parameter), parsed for the field's type. A name that is not
 * a field is ignored, as grpc-gateway ignores unknown query parameters.
 */
function bindStrings(
  type: RType,
  obj: Record<string, unknown>,
  path: string[],
  values: string[],
  opts: JsonOptions,
  where: string,
): void {
  let t = type;
  let target = obj;
  for (let i = 0; i < path.length; i++) {
    const f = fieldNamed(t, path[i]);
    if (!f) return;
    const ft = fieldType(f);
    if (i < path.length - 1) {
      if (!isType(ft) || f.repeated || f.map)
        throw new HttpCallError(status.INVALID_ARGUMENT, `${where}: ${path[i]} is not a message field`);
      const next = (target[f.name] as Record<string, unknown> | undefined) ?? {};
      target[f.name] = next;
      target = next;
      t = ft;
      continue;
    }
    if (f.map) throw new HttpCallError(status.INVALID_ARGUMENT, `${where}: map fields cannot be set from the URL`);
    if (!f.repeated && values.length > 1) throw new HttpCallError(status.INVALID_ARGUMENT, `${where}: too many values`);
    const parse = (v: string): unknown => {
      if (isEnum(ft)) return enumFromJson(ft, v, where);
      // Well-known types with a string JSON form (Timestamp, Duration, FieldMask, wrappers).
      if (isType(ft)) return fromJson(ft, v, opts, where);
      return scalarFromJson(f.type, v, where);
    };
    target[f.name] = f.repeated
      ? [...((target[f.name] as unknown[] | undefined) ?? []), ...values.map(parse)]
      : parse(values[0]);
  }
}

/** The gateway as a request handler, for its own port and for the UI's (ui.ts: same origin as the UI). */
export function httpGatewayHandler(opts: HttpGatewayOptions): http.RequestListener {
  const bound = new Map<Route, Bound>();
  const routes: Route[] = [];
  for (const svc of opts.services) {
    const service = root.lookupService(svc.name).resolveAll();
    for (const route of routesOf(service)) {
      const m = service.methods[route.method];
      const method = svc.methods.find((x) => x.name === route.method);
      if (!method || !m.resolvedRequestType || !m.resolvedResponseType) continue;
      routes.push(route);
      bound.set(route, { route, method, requestType: m.resolvedRequestType, responseType: m.resolvedResponseType });
    }
  }

  const send = (res: http.ServerResponse, code: number, body: Json, pretty: boolean): void => {
    const text = JSON.stringify(body, null, pretty ? 2 : undefined);
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
  const sendError = (res: http.ServerResponse, code: number, message: string, pretty: boolean): void => {
    send(res, httpStatusOf(code), { code, message, details: [] }, pretty);
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    const pretty = query.has('pretty');
    const jsonOpts: JsonOptions = { shorthand: opts.payloadShorthand !== false && !query.has('noPayloadShorthand') };
    const httpMethod = (req.method ?? 'GET').toUpperCase();
    if (httpMethod === 'GET' && rawPath === '/api/v1/settings') {
      send(res, 200, settings(opts), pretty);
      return;
    }
    const match = matchRoute(routes, httpMethod, rawPath);
    if (match === 'not-found') {
      sendError(res, status.NOT_FOUND, 'Not Found', pretty);
      return;
    }
    if (match === 'method') {
      sendError(res, status.UNIMPLEMENTED, 'Method Not Allowed', pretty);
      return;
    }
    const b = bound.get(match.route);
    if (!b) {
      sendError(res, status.NOT_FOUND, 'Not Found', pretty);
      return;
    }
    const where = b.route.method;
    let request: Record<string, unknown>;
    try {
      const text = (await readBody(req)).toString('utf8');
      if (b.route.body === '*') {
        request = text.trim() === '' ? {} : fromJson(b.requestType, parseJson(text), jsonOpts, where);
      } else {
        request = {};
        if (b.route.body !== undefined && text.trim() !== '') {
          const f = fieldNamed(b.requestType, b.route.body);
          const ft = f ? fieldType(f) : null;
          if (!f || !isType(ft)) throw new HttpCallError(status.INTERNAL, `${where}: bad body field ${b.route.body}`);
          request[f.name] = fromJson(ft, parseJson(text), jsonOpts, `${where}.${b.route.body}`);
        }
        // Query parameters bind to fields by (dotted) name; none with a whole-body route.
        for (const key of new Set(query.keys())) {
          bindStrings(
            b.requestType,
            request,
            key.split('.'),
            query.getAll(key),
            jsonOpts,
            `${where}: query parameter ${key}`,
          );
        }
      }
      // Path parameters last: they win over the body, as in grpc-gateway.
      for (const p of match.params)
        bindStrings(
          b.requestType,
          request,
          p.field,
          [p.value],
          jsonOpts,
          `${where}: path parameter ${p.field.join('.')}`,
        );
    } catch (err) {
      if (err instanceof HttpCallError) sendError(res, err.code, err.message, pretty);
      else if (err instanceof JsonError) sendError(res, status.INVALID_ARGUMENT, err.message, pretty);
      else throw err;
      return;
    }
    let bytes: Buffer;
    try {
      bytes = Buffer.from(b.requestType.encode(b.requestType.fromObject(request)).finish());
    } catch (err) {
      sendError(res, status.INVALID_ARGUMENT, `${where}: ${err instanceof Error ? err.message : String(err)}`, pretty);
      return;
    }
    const cancels: (() => void)[] = [];
    res.on('close', () => {
      if (res.writableFinished) return;
      for (const cb of cancels.splice(0)) cb();
    });
    const ctx: CallContext = {
      method: b.method.name,
      remainingMs: () => Infinity,
      onCancel: (cb) => void cancels.push(cb),
    };
    const result = await invoke(b.method, bytes, ctx, opts.logger);
    if (res.destroyed) return;
    if (!result.ok) {
      sendError(res, result.code, result.details, pretty);
      return;
    }
    // The answer exactly as gRPC sends it (the frame's message bytes), read back as a message:
    // histories arrive pre-encoded (docs/performance.md "Server CPU per workflow: encode once").
    const message = b.responseType.decode(result.frame.subarray(5));
    send(res, 200, toJson(b.responseType, message, jsonOpts), pretty);
  };

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      opts.logger.error({ url: req.url, err: err instanceof Error ? err.stack : String(err) }, 'HTTP API call failed');
      if (!res.headersSent) sendError(res, status.INTERNAL, err instanceof Error ? err.message : String(err), false);
      else res.destroy();
    });
  };
}

export async function startHttpGateway(opts: HttpGatewayOptions): Promise<RunningHttpGateway> {
  return listen(http.createServer(httpGatewayHandler(opts)), opts.host, opts.port);
}

/** Listens on `host:port` (0 = any free port); `close` also ends kept-alive connections. */
export async function listen(server: http.Server, host: string, port: number): Promise<RunningHttpGateway> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
