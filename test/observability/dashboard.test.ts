// tier: full
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import YAML from 'yaml';
import {
  CONTROL_PLANE_FAMILIES,
  DASHBOARD_PANELS,
  DATASOURCE_UID,
  metricsDatasource,
  platformDashboard,
  selectDashboardPanels,
  seriesNames,
} from '../../domain/observability/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { promtool } from './promtool.js';

/** The series of the spec's families (metrics-families.test.ts checks a real scrape serves them). */
function exportedNames(): Set<string> {
  return new Set(CONTROL_PLANE_FAMILIES.flatMap(seriesNames));
}

test("every dashboard query reads only series of the spec's metric families (or the metrics store's up), and declares them", (t) => {
  const exported = exportedNames();
  for (const panel of DASHBOARD_PANELS) {
    for (const query of panel.queries) {
      for (const name of query.expr.match(/svc_[a-z_]+/g) ?? []) {
        t.true(exported.has(name), `${panel.title} reads ${name}, which nothing registers`);
        t.true(panel.metrics.includes(name), `${panel.title} reads ${name} without declaring it`);
      }
    }
  }
  t.is(selectDashboardPanels(exported).length, DASHBOARD_PANELS.length);
});

test('promtool parses every dashboard query (checked as recording rules)', async (t) => {
  const dir = tempDir(t);
  const rules = DASHBOARD_PANELS.flatMap((panel, p) =>
    panel.queries.map((query, q) => ({ record: `svc:dashboard_panel_${p}_${q}`, expr: query.expr })),
  );
  fs.writeFileSync(path.join(dir, 'dashboard.yml'), YAML.stringify({ groups: [{ name: 'dashboard', rules }] }));
  const run = await promtool(dir, 'check', 'rules', 'dashboard.yml');
  t.is(run.code, 0, run.output);
});

test('the dashboard lays panels out two per row and points every query at the svc-metrics datasource', (t) => {
  const dashboard = platformDashboard(DASHBOARD_PANELS) as {
    uid: string;
    panels: {
      id: number;
      gridPos: { x: number; y: number };
      datasource: { uid: string };
      targets: { datasource: { uid: string }; refId: string }[];
    }[];
  };
  t.is(dashboard.uid, 'svc-platform');
  t.deepEqual(
    dashboard.panels.map((p) => p.id),
    DASHBOARD_PANELS.map((_, i) => i + 1),
  );
  t.deepEqual(
    dashboard.panels.slice(0, 3).map((p) => p.gridPos),
    [
      { h: 8, w: 12, x: 0, y: 0 },
      { h: 8, w: 12, x: 12, y: 0 },
      { h: 8, w: 12, x: 0, y: 8 },
    ] as never,
  );
  for (const panel of dashboard.panels) {
    t.is(panel.datasource.uid, DATASOURCE_UID);
    for (const target of panel.targets) t.is(target.datasource.uid, DATASOURCE_UID);
  }
});

test('the datasource document names the metrics store URL and carries no credentials', (t) => {
  const doc = metricsDatasource('http://host.docker.internal:9090') as {
    apiVersion: number;
    datasources: Record<string, unknown>[];
  };
  t.is(doc.apiVersion, 1);
  t.is(doc.datasources[0]!.url, 'http://host.docker.internal:9090');
  t.is(doc.datasources[0]!.type, 'prometheus');
  for (const key of ['basicAuthPassword', 'secureJsonData', 'password', 'basicAuthUser'])
    t.false(key in doc.datasources[0]!);
});
