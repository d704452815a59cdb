/**
 * The linters integrators run on /openapi.json, run here in process on the generated document
 * (docs/testing.md "The document passes the linters"): Redocly's `recommended` rules
 * (@redocly/openapi-core) and Spectral's `spectral:oas` ruleset (@stoplight/spectral-core and
 * -rulesets). Both are dev dependencies and need no network: the document has no external `$ref`.
 *
 *   const findings = await lintOpenApi(buildOpenApiDocument());
 *   assert.deepEqual(findings, [], describeFindings(findings));
 */
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Spectral, type RulesetDefinition } from '@stoplight/spectral-core';
import { oas } from '@stoplight/spectral-rulesets';

export interface LintFinding {
  linter: 'redocly' | 'spectral';
  /** `error` or `warn` (Spectral's `info` and `hint` too: any finding fails the document). */
  severity: string;
  rule: string;
  /** A JSON pointer into the document (`#/webhooks/charge.paid/post`). */
  path: string;
  message: string;
}

const SPECTRAL_SEVERITY = ['error', 'warn', 'info', 'hint'] as const;

/** JSON pointer of a Spectral path (`['paths', '/v1/charges', 'get']` → `#/paths/~1v1~1charges/get`). */
function pointer(path: ReadonlyArray<string | number>): string {
  return `#/${path.map((s) => String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}

async function redoclyFindings(source: string): Promise<LintFinding[]> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source, absoluteRef: '/openapi.json', config });
  return problems.map((p) => ({
    linter: 'redocly',
    severity: p.severity,
    rule: p.ruleId,
    path: p.location[0]?.pointer ?? '#',
    message: p.message,
  }));
}

async function spectralFindings(source: string): Promise<LintFinding[]> {
  const spectral = new Spectral();
  // The ruleset's declarations widen each rule's `severity` to string; the object is a ruleset as it is.
  spectral.setRuleset(oas as RulesetDefinition);
  const results = await spectral.run(source);
  return results.map((r) => ({
    linter: 'spectral',
    severity: SPECTRAL_SEVERITY[r.severity] ?? String(r.severity),
    rule: String(r.code),
    path: pointer(r.path),
    message: r.message,
  }));
}

/** Every finding of both linters on the document, as served (JSON). */
export async function lintOpenApi(document: Record<string, unknown>): Promise<LintFinding[]> {
  const source = JSON.stringify(document, null, 2);
  const [redocly, spectral] = await Promise.all([redoclyFindings(source), spectralFindings(source)]);
  return [...redocly, ...spectral];
}

/**
 * What to change for the rules the document has run into, at the source: an endpoint's entry in
 * ENDPOINTS, the tables beside it, or the zod schema in src/contracts it is generated from.
 */
const FIXES: Record<string, string> = {
  'operation-description':
    'give the endpoint a `description` in ENDPOINTS (src/openapi/document.ts), or the event one in WEBHOOK_EVENT_DESCRIPTIONS',
  'operation-summary': 'give the endpoint a `summary` in ENDPOINTS (src/openapi/document.ts)',
  'tag-description': 'add the tag, with its description, to TAGS in src/openapi/document.ts',
  'operation-tag-defined': 'add the tag, with its description, to TAGS in src/openapi/document.ts',
  'security-defined':
    'declare `security` on the operation (an `auth` of ENDPOINTS; `[]` when it takes no credential) and define every scheme it names in components.securitySchemes',
  'operation-operationId-unique': 'two endpoints derive the same operationId: give them distinct paths or methods',
  'operation-2xx-response': 'list the success answer in the endpoint’s `responses`',
  'operation-4xx-response': 'list an error answer in the endpoint’s `responses`',
  'no-unused-components': 'reference the component from an operation, or drop it from components',
};
const FALLBACK =
  'fix the generator (src/openapi/document.ts) or the zod schema in src/contracts the part comes from; do not turn the rule off';

/** One line per finding, `linter severity rule path: message`, then what to change for each rule. */
export function describeFindings(findings: readonly LintFinding[]): string {
  if (findings.length === 0) return 'no findings';
  const lines = findings.map((f) => `  ${f.linter} ${f.severity} ${f.rule} ${f.path}: ${f.message}`);
  const rules = [...new Set(findings.map((f) => f.rule))];
  const fixes = rules.map((rule) => `  ${rule}: ${FIXES[rule] ?? FALLBACK}`);
  return [
    `${findings.length} linter finding(s) in the OpenAPI document (docs/testing.md "The document passes the linters"):`,
    ...lines,
    'To fix:',
    ...fixes,
  ].join('\n');
}
