/**
 * The document GET /openapi.json serves (buildOpenApiDocument, as src/http/routes/docs.ts builds
 * it) passes the linters integrators run on it with no error and no warning: Redocly's
 * `recommended` rules and Spectral's `spectral:oas` (docs/testing.md "The document passes the
 * linters"). A failure lists every finding and what to add where.
 */
import assert from 'node:assert/strict';
import { buildOpenApiDocument } from '../../src/openapi/document';
import { describeFindings, lintOpenApi } from '../support/openapi-lint';

type Json = Record<string, unknown>;

/**
 * The document cut down to one path and one webhook, with what the rules ask for taken away: the
 * description of GET /v1/charges, the security of `charge.paid` and the description of a new last tag.
 */
function brokenDocument(): Json & { tags: Json[] } {
  const doc = structuredClone(buildOpenApiDocument()) as Json & {
    paths: Record<string, Record<string, Json>>;
    webhooks: Record<string, Record<string, Json>>;
  };
  const charges = doc.paths['/v1/charges'] as Record<string, Json>;
  delete charges.get?.description;
  const paid = doc.webhooks['charge.paid'] as Record<string, Json>;
  delete paid.post?.security;
  return {
    ...doc,
    paths: { '/v1/charges': { get: charges.get } },
    webhooks: { 'charge.paid': paid },
    tags: [...(doc.tags as Json[]), { name: 'Undescribed' }],
  };
}

describe('OpenAPI document: Redocly and Spectral find nothing', function () {
  this.timeout(30_000);

  it('has no error and no warning under Redocly recommended and spectral:oas', async () => {
    const findings = await lintOpenApi(buildOpenApiDocument());
    assert.equal(findings.length, 0, describeFindings(findings));
  });

  it('names each finding by linter, rule, path and message, and says what to add', async () => {
    const broken = brokenDocument();
    const findings = await lintOpenApi(broken);
    const report = describeFindings(findings);
    const found = (linter: string, rule: string, path: string) =>
      findings.some((f) => f.linter === linter && f.rule === rule && f.path === path);
    assert.ok(found('spectral', 'operation-description', '#/paths/~1v1~1charges/get'), report);
    assert.ok(found('redocly', 'security-defined', '#/webhooks/charge.paid/post'), report);
    assert.ok(found('redocly', 'tag-description', `#/tags/${broken.tags.length - 1}/description`), report);
    assert.match(report, /spectral warn operation-description #\/paths\/~1v1~1charges\/get: Operation "description"/);
    assert.match(report, /operation-description: give the endpoint a `description` in ENDPOINTS/);
    assert.match(report, /security-defined: declare `security` on the operation/);
    assert.match(report, /tag-description: add the tag, with its description, to TAGS/);
  });
});
