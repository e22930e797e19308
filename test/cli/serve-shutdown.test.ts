// tier: full
import { once } from 'node:events';
import test from 'ava';
import WebSocket from 'ws';
import { runSvc, startSvc } from '../helpers/cli.js';
import { rawUpgrade } from '../helpers/raw-upgrade.js';
import { tempDir } from '../helpers/temp-dir.js';

/** The HTTP drain deadline of every listener (`RunningServer.close`'s default grace). */
const DRAIN_DEADLINE_MS = 10_000;

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  // Serial: two platforms starting at once on a loaded machine only slow each other down.
  test.serial(
    `svc serve exits on ${signal} within the drain deadline while upgrades are open on every listener`,
    async (t) => {
      const data = tempDir(t);
      const env = {
        SVC_PORT: '0',
        SVC_KNOWLEDGE_PORT: '0',
        SVC_KNOWLEDGE_ADMIN_PORT: '0',
        SVC_DATA_DIR: data,
        SVC_APPS_DIR: `${data}/apps`,
        SVC_LOG_LEVEL: 'info',
      };
      const urls = { control: '' };
      const { child, line } = await startSvc(
        ['serve'],
        (l) => {
          if (l.msg === 'control plane listening') urls.control = String(l.url);
          return l.msg === 'knowledge store listening';
        },
        { env, timeoutMs: 90_000 },
      );
      t.teardown(() => child.kill('SIGKILL'));
      // Clients that never close their side: the compatibility exec upgrade (once left unanswered), unknown paths on
      // the knowledge listeners, and a live event stream.
      const exec = await rawUpgrade(urls.control, '/api/apps/demo/exec');
      const knowledge = await rawUpgrade(String(line.url), '/v1/anything');
      const admin = await rawUpgrade(String(line.adminUrl), '/debug/ws');
      const stream = new WebSocket(`${urls.control.replace('http', 'ws')}/ws`);
      await once(stream, 'message');
      t.regex(await exec.ended, /^HTTP\/1\.1 400 /);
      t.regex(await knowledge.ended, /^HTTP\/1\.1 404 /);
      t.regex(await admin.ended, /^HTTP\/1\.1 404 /);
      const streamClosed = once(stream, 'close');
      const started = Date.now();
      child.kill(signal);
      const [code] = (await once(child, 'exit')) as [number | null];
      const elapsed = Date.now() - started;
      await streamClosed;
      t.is(code, 0);
      t.true(elapsed < DRAIN_DEADLINE_MS, `exited after ${elapsed} ms`);
      t.log(`${signal}: exited after ${elapsed} ms`);
    },
  );
}

test.serial('a start refused by a malformed setting stops every watcher before the databases close', async (t) => {
  const data = tempDir(t);
  const result = await runSvc(['serve'], {
    env: {
      SVC_PORT: '0',
      SVC_KNOWLEDGE_PORT: '0',
      SVC_KNOWLEDGE_ADMIN_PORT: '0',
      SVC_DATA_DIR: data,
      SVC_APPS_DIR: `${data}/apps`,
      SVC_LOG_LEVEL: 'debug',
      // The control plane starts (its watchers with it), then the knowledge store refuses this.
      SVC_KNOWLEDGE_TOKENS: 'not-a-token',
      // With containers on, the capacity and cron checks are slow enough to be in flight at the close.
      SVC_CONTAINER_RUNTIME: 'auto',
    },
    timeoutMs: 90_000,
  });
  t.is(result.code, 1, result.stderr);
  const lines = `${result.stdout}\n${result.stderr}`
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string; err?: { message?: string } });
  t.true(
    lines.some((l) => l.msg === 'control plane listening'),
    'the control plane had started',
  );
  const fatal = lines.find((l) => l.msg === 'start failed');
  t.regex(fatal?.err?.message ?? '', /SVC_KNOWLEDGE_TOKENS: a token must be tenant:permissions:secret/);
  t.false(JSON.stringify(fatal).includes('not-a-token'), 'the refused value is not logged');
  const afterClose = lines.filter(
    (l) => /database connection is not open/.test(JSON.stringify(l)) || / check failed$/.test(l.msg),
  );
  t.deepEqual(afterClose, [], 'no watcher ran against a closed database');
});
