// tier: quick
import http from 'node:http';
import test from 'ava';
import {
  PAGE_SIZE,
  processTree,
  isProcessAlive,
  parseStat,
  probeHttp,
  readProcess,
  readRssBytes,
} from '../../../platform/local-scheduler/index.js';

test('parseStat reads pid, state, parent, group, start time, rss and CPU ticks even when the name holds spaces and parentheses', (t) => {
  const line =
    '4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 200 18446744073709551615';
  t.deepEqual(parseStat(line), {
    pid: 4242,
    ppid: 1,
    pgrp: 4242,
    state: 'S',
    startTime: '987654',
    rssPages: 200,
    cpuTicks: 3,
  });
});

test('PAGE_SIZE times the stat rss agrees with VmRSS of this process', (t) => {
  t.true([4096, 16384, 65536].includes(PAGE_SIZE));
  const fromStat = readProcess(process.pid)!.rssPages * PAGE_SIZE;
  const fromStatus = readRssBytes(process.pid);
  t.true(Math.abs(fromStat - fromStatus) < fromStatus * 0.2, `${fromStat} vs ${fromStatus}`);
});

test('processTree finds the group and descendants that left it, skipping zombies', (t) => {
  const p = (pid: number, ppid: number, pgrp: number, state = 'S') => ({
    pid,
    ppid,
    pgrp,
    state,
    startTime: '1',
    rssPages: 1,
    cpuTicks: 0,
  });
  const table = [
    p(1, 0, 1),
    p(100, 1, 100),
    p(101, 100, 100),
    p(102, 101, 555),
    p(103, 102, 555),
    p(104, 100, 100, 'Z'),
    p(200, 1, 200),
  ];
  t.deepEqual(
    processTree(100, table).sort((a, b) => a - b),
    [100, 101, 102, 103],
  );
  t.deepEqual(processTree(200, table), [200]);
  t.deepEqual(processTree(999, table), []);
});

test('readProcess and readRssBytes describe the current process', (t) => {
  const self = readProcess(process.pid);
  t.is(self!.pid, process.pid);
  t.true(isProcessAlive(process.pid, self!.startTime));
  t.false(isProcessAlive(process.pid, '1'));
  t.true(readRssBytes(process.pid) > 1024 * 1024);
});

test('probeHttp reports passing on 2xx, warning on 429 and critical on errors', async (t) => {
  let status = 200;
  const server = http.createServer((_req, res) => {
    res.statusCode = status;
    res.end('body');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}/healthz`;
  t.is((await probeHttp(url, 1000)).status, 'passing');
  status = 429;
  t.is((await probeHttp(url, 1000)).status, 'warning');
  status = 500;
  const failing = await probeHttp(url, 1000);
  t.is(failing.status, 'critical');
  t.regex(failing.output, /500 Internal Server Error Output: body/);
  server.close();
  await new Promise((resolve) => server.once('close', resolve));
  t.regex((await probeHttp(url, 1000)).output, /ECONNREFUSED/);
});
