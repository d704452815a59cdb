/**
 * The API's answers and webhook bodies checked against the OpenAPI document (src/openapi/document.ts,
 * the one GET /openapi.json serves): test/support/api.ts runs `assertResponseMatchesDocument` on every
 * response its client receives, and test/support/webhook-receiver.ts runs `webhookBodyProblems` on
 * every delivery, so a field the document does not describe (or describes otherwise) fails the test.
 *
 *   assertResponseMatchesDocument('GET', '/v1/charges?page=2', 200, 'application/json', body);
 *   webhookBodyProblems(rawBytes);   // [] when the body is one of the document's `webhooks`
 */
import assert from 'node:assert/strict';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../src/openapi/document';

const DOC_ID = 'https://pixflow.test/openapi.json';

interface ResponseObject {
  description: string;
  content?: Record<string, { schema: unknown }>;
}
interface Operation {
  responses: Record<string, ResponseObject>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: unknown }> } } }>;
}

interface Compiled {
  doc: OpenApiDocument;
  ajv: Ajv2020;
  templates: Array<{ template: string; params: number; pattern: RegExp }>;
  validators: Map<string, ValidateFunction>;
}

let compiled: Compiled | undefined;

/** The document the checks use; built once per run, as the app builds it once per process. */
export function documentUnderTest(): OpenApiDocument {
  return setup().doc;
}

function setup(): Compiled {
  if (compiled) return compiled;
  const doc = buildOpenApiDocument() as unknown as OpenApiDocument;
  // strict off: OpenAPI's own keywords (openapi, paths, …) sit around the schemas in the same tree.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: DOC_ID });
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    params: (template.match(/\{/g) ?? []).length,
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  // A literal segment wins over a parameter (/v1/webhooks/merchant/events over …/{id}).
  templates.sort((a, b) => a.params - b.params);
  compiled = { doc, ajv, templates, validators: new Map() };
  return compiled;
}

const pointer = (...parts: string[]): string =>
  parts.map((p) => '/' + p.replace(/~/g, '~0').replace(/\//g, '~1')).join('');

function validator(c: Compiled, jsonPointer: string): ValidateFunction {
  let v = c.validators.get(jsonPointer);
  if (!v) {
    v = c.ajv.getSchema(`${DOC_ID}#${jsonPointer}`);
    assert.ok(v, `no schema at ${jsonPointer}`);
    c.validators.set(jsonPointer, v);
  }
  return v;
}

const describeErrors = (errors: ErrorObject[] | null | undefined): string[] =>
  (errors ?? []).map(
    (e) =>
      `${e.instancePath || '(root)'} ${e.message ?? ''}${e.keyword === 'additionalProperties' ? `: ${String(e.params.additionalProperty)}` : ''}`,
  );

/** The documented template of a concrete path, or undefined when the document does not list it. */
export function documentedPath(path: string): string | undefined {
  const bare = path.split('?')[0] as string;
  return setup().templates.find((t) => t.pattern.test(bare))?.template;
}

/**
 * Why a response does not match what the document says of its path, method and status; empty when
 * it matches or the document does not describe the operation (an unknown path, HEAD, OPTIONS).
 */
export function responseProblems(
  method: string,
  path: string,
  status: number,
  contentType: string | null,
  body: unknown,
): string[] {
  const c = setup();
  const template = documentedPath(path);
  if (!template) return [];
  const op = c.doc.paths[template]?.[method.toLowerCase()];
  if (!op) return [];
  const response = op.responses[String(status)];
  if (!response) return [`status ${status} is not documented for ${method.toUpperCase()} ${template}`];
  const json = response.content?.['application/json'];
  if (!json) return [];
  if (!(contentType ?? '').includes('json')) return [`expected a JSON body, got content-type ${contentType}`];
  const validate = validator(
    c,
    pointer('paths', template, method.toLowerCase(), 'responses', String(status)) +
      pointer('content', 'application/json', 'schema'),
  );
  return validate(body) ? [] : describeErrors(validate.errors);
}

/** Fails (AssertionError) when the response drifts from the document. */
export function assertResponseMatchesDocument(
  method: string,
  path: string,
  status: number,
  contentType: string | null,
  body: unknown,
): void {
  const problems = responseProblems(method, path, status, contentType, body);
  assert.deepEqual(
    problems,
    [],
    `${method.toUpperCase()} ${path} → ${status} does not match /openapi.json:\n  ${problems.join('\n  ')}\nbody: ${JSON.stringify(body)}`,
  );
}

/** Why a delivered body is not one of the document's `webhooks` (empty when it is). */
export function webhookBodyProblems(raw: Buffer | string): string[] {
  const c = setup();
  let body: unknown;
  try {
    body = JSON.parse(raw.toString());
  } catch {
    return ['the body is not JSON'];
  }
  const event = (body as { event?: unknown } | null)?.event;
  if (typeof event !== 'string' || !c.doc.webhooks[event]) return [`event ${JSON.stringify(event)} is not documented`];
  const validate = validator(
    c,
    pointer('webhooks', event, 'post', 'requestBody', 'content', 'application/json', 'schema'),
  );
  return validate(body) ? [] : describeErrors(validate.errors).map((p) => `${event}: ${p}`);
}
