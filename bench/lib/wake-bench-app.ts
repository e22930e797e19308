/**
 * The app bench/wake runs: a server that answers at once or after WORK_MS, and reports when it
 * started, listened, saw its first health request and the request it answers, so the bench can
 * split a cold wake's time; and the spec of each instance of it.
 */

/** The server's source (`server.mjs`). */
export const WAKE_BENCH_APP = `import http from 'node:http';
// Epoch ms of the first health request's arrival and answer, and of this request's arrival: where
// the time after listening goes (the check's schedule, the app's own first answer, registry and gateway).
let firstHealthAt = 0;
let healthAnsweredAt = 0;
const server = http.createServer((req, res) => {
  if (req.url === '/healthz') {
    if (firstHealthAt === 0) firstHealthAt = Date.now();
    res.writeHead(200);
    res.end('ok');
    if (healthAnsweredAt === 0) healthAnsweredAt = Date.now();
    return;
  }
  const arrivedAt = Date.now();
  const answer = () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ bootMs: readyAt - startedAt, startedAt, readyAt, firstHealthAt, healthAnsweredAt, arrivedAt, pid: process.pid }));
  };
  if (workMs > 0) setTimeout(answer, workMs); else answer();
});
// WORK_MS: time each request waits before its answer (a database round trip), 0 for none.
const workMs = Number(process.env.WORK_MS || 0);
// T0: epoch ms taken by the shell just before exec of node (see the cold app's command), so boot
// includes node's own start-up; performance.timeOrigin is the fallback.
const startedAt = Number(process.env.T0 || performance.timeOrigin);
let readyAt = 0;
server.listen(Number(process.env.PORT), '127.0.0.1', () => { readyAt = Date.now(); });
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

/** The spec of an instance of the app: `min` allocations, `workMs` per request, health checked every `interval`. */
export function wakeBenchSpec(name: string, port: number, min: number, workMs: number, interval: string): string {
  return `name: ${name}\ndeploy: true\nprocesses:\n  web:\n    command: T0=$(date +%s%3N) exec node server.mjs\n    port: ${port}\n    health:\n      path: /healthz\n      interval: ${interval}\n      timeout: 1s\n    scaling:\n      min: ${min}\n    resources:\n      memory: 128\nenv:\n  WORK_MS: "${workMs}"\nendpoints:\n  - url: ${name}.bench.test\n`;
}
