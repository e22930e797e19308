// tier: quick
import test from 'ava';
import { ControlMetrics, MAX_EVENT_TYPES } from '../../platform/metrics/control-metrics.js';
import { parseExposition, samplesOf } from '../observability/exposition.js';

test('ControlMetrics labels at most MAX_EVENT_TYPES event types by name and counts the rest as other', async (t) => {
  const metrics = new ControlMetrics();
  for (let i = 0; i < MAX_EVENT_TYPES + 5; i++)
    metrics.recordEvent(`custom.type_${i}`, 'info', '2026-03-01T00:00:00.000Z');
  metrics.recordEvent('custom.type_0', 'info', '2026-03-01T00:00:01.000Z');
  const families = parseExposition((await metrics.text()).body);
  t.is(samplesOf(families, 'svc_events_total').length, MAX_EVENT_TYPES + 1);
  t.is(samplesOf(families, 'svc_events_total', { type: 'other' })[0]?.value, 5);
  t.is(samplesOf(families, 'svc_events_total', { type: 'custom.type_0' })[0]?.value, 2);
});

test('ControlMetrics reads the disk gauges at scrape time and keeps the last values when a read fails', async (t) => {
  let disk: { totalBytes: number; freeBytes: number } | undefined = { totalBytes: 1000, freeBytes: 400 };
  const metrics = new ControlMetrics({
    disk: () => {
      if (disk === undefined) throw new Error('statfs failed');
      return disk;
    },
  });
  const read = async () => parseExposition((await metrics.text()).body);
  t.is(samplesOf(await read(), 'svc_host_disk_free_bytes')[0]?.value, 400);
  disk = { totalBytes: 1000, freeBytes: 300 };
  t.is(samplesOf(await read(), 'svc_host_disk_free_bytes')[0]?.value, 300);
  disk = undefined;
  const kept = await read();
  t.is(samplesOf(kept, 'svc_host_disk_free_bytes')[0]?.value, 300);
  t.is(samplesOf(kept, 'svc_host_disk_total_bytes')[0]?.value, 1000);
});
