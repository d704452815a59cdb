/**
 * docs/alerts/pixflow.rules.yml (docs/operations.md "Alerts"): Prometheus alerting rules in the
 * rule-file schema, each with a runbook section of docs/operations.md that exists, and each
 * expression on series that GET /metrics exposes. `promtool check rules` runs too where promtool
 * is on PATH (pending with the reason otherwise).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { headingsOf } from '../support/doc-citations';
import { renderMetrics } from '../../src/observability/metrics';
import { needing, type Artefact } from '../support/external-artefacts';

const ROOT = path.resolve(__dirname, '../..');
const RULES = path.join(ROOT, 'docs/alerts/pixflow.rules.yml');

interface Rule {
  alert?: unknown;
  record?: unknown;
  expr?: unknown;
  for?: unknown;
  labels?: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

function promtool(): Artefact {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'promtool');
    if (dir && fs.existsSync(candidate)) return { path: candidate };
  }
  return { reason: 'no promtool on PATH (the YAML schema checks above still run)' };
}

describe('alert rules (docs/alerts/pixflow.rules.yml)', () => {
  const doc = YAML.parse(fs.readFileSync(RULES, 'utf8')) as { groups?: unknown };

  const rules = (): Rule[] => (doc.groups as Array<{ rules: Rule[] }>).flatMap((g) => g.rules);

  it('follows the Prometheus rule-file schema', () => {
    assert.deepEqual(Object.keys(doc), ['groups']);
    assert.ok(Array.isArray(doc.groups) && doc.groups.length > 0);
    const groupNames = new Set<string>();
    const alertNames = new Set<string>();
    for (const g of doc.groups as Array<Record<string, unknown>>) {
      assert.deepEqual(Object.keys(g).sort(), ['name', 'rules']);
      assert.equal(typeof g.name, 'string');
      assert.ok(!groupNames.has(g.name as string), `group ${String(g.name)} is unique`);
      groupNames.add(g.name as string);
      assert.ok(Array.isArray(g.rules) && g.rules.length > 0);
      for (const r of g.rules as Rule[]) {
        assert.ok(
          Object.keys(r).every((k) => ['alert', 'expr', 'for', 'labels', 'annotations'].includes(k)),
          JSON.stringify(r),
        );
        assert.match(String(r.alert), /^Pixflow[A-Z][A-Za-z]+$/);
        assert.ok(!alertNames.has(r.alert as string), `alert ${String(r.alert)} is unique`);
        alertNames.add(r.alert as string);
        assert.equal(typeof r.expr, 'string');
        assert.match(String(r.for), /^\d+[smh]$/, `${String(r.alert)}: for is a duration`);
        assert.ok(['page', 'ticket'].includes(String(r.labels?.severity)), `${String(r.alert)}: severity page|ticket`);
        assert.equal(typeof r.annotations?.summary, 'string');
        // Balanced brackets and template braces: what promtool would refuse first.
        const expr = String(r.expr);
        for (const [open, close] of [
          ['(', ')'],
          ['[', ']'],
          ['{', '}'],
        ] as const) {
          assert.equal(
            expr.split(open).length,
            expr.split(close).length,
            `${String(r.alert)}: ${open}${close} balanced`,
          );
        }
        const summary = String(r.annotations?.summary);
        assert.equal(summary.split('{{').length, summary.split('}}').length, `${String(r.alert)}: template balanced`);
      }
    }
  });

  it('gives every alert a runbook section that exists in docs/operations.md', () => {
    // GitHub's anchors: lowercase, punctuation dropped, spaces as hyphens.
    const anchors = new Set(
      [...headingsOf(fs.readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8'))].map((h) =>
        h
          .toLowerCase()
          .replace(/[^\p{L}\p{N} -]/gu, '')
          .replace(/ /g, '-'),
      ),
    );
    for (const r of rules()) {
      const runbook = /^docs\/operations\.md#([a-z0-9-]+)$/.exec(String(r.annotations?.runbook));
      assert.ok(runbook, `${String(r.alert)}: runbook is docs/operations.md#<section>`);
      assert.ok(anchors.has(runbook[1] ?? ''), `${String(r.alert)}: section #${runbook[1]} exists`);
    }
  });

  it('alerts only on series that /metrics exposes', async () => {
    const exposed = new Set(
      [...(await renderMetrics()).body.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap(([, name, type]) =>
        type === 'histogram' ? [`${name}_bucket`, `${name}_count`, `${name}_sum`] : [name ?? ''],
      ),
    );
    const referenced = new Set<string>();
    for (const r of rules()) {
      const names = String(r.expr).match(/\bpixflow_[a-z0-9_]+/g) ?? [];
      assert.ok(names.length > 0, `${String(r.alert)} uses a pixflow series`);
      for (const name of names) {
        assert.ok(exposed.has(name), `${String(r.alert)}: ${name} is on /metrics`);
        referenced.add(name.replace(/_(bucket|count|sum)$/, ''));
      }
    }
    // The backlogs of issue 29 each have an alert.
    for (const name of [
      'pixflow_callback_inbox_backlog',
      'pixflow_callback_inbox_oldest_age_seconds',
      'pixflow_callback_inbox_parked',
      'pixflow_acquirer_errors_total',
      'pixflow_acquirer_request_duration_seconds',
      'pixflow_refunds_total',
      'pixflow_infractions_total',
      'pixflow_webhook_delivery_latency_seconds',
    ]) {
      assert.ok(referenced.has(name), `an alert watches ${name}`);
    }
  });

  const PROMTOOL = promtool();
  const title = needing(PROMTOOL, 'passes `promtool check rules`');
  if (!PROMTOOL.path) it(title);
  else
    it(title, () => {
      const r = spawnSync(PROMTOOL.path ?? '', ['check', 'rules', RULES], { encoding: 'utf8' });
      assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    });
});
