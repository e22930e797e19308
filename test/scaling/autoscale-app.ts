/**
 * The sample app of the autoscaling tests and bench/autoscale: `/slow?ms=N` answers after N ms
 * without using the CPU (requests in flight pile up), `/burn?ms=N` spins the CPU for N ms (a
 * CPU-bound handler); both answer with the pid, so a client sees which allocation served it.
 */

/** The server (`server.mjs` of the app's code repository). */
export const AUTOSCALE_APP_SERVER = `import http from 'node:http';
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://app');
  const ms = Number(url.searchParams.get('ms') ?? 50);
  if (url.pathname === '/healthz') { res.end('ok'); return; }
  if (url.pathname === '/slow') { setTimeout(() => res.end(String(process.pid)), ms); return; }
  if (url.pathname === '/burn') {
    const until = performance.now() + ms;
    let x = 0;
    while (performance.now() < until) x += Math.sqrt(x + 1);
    res.end(String(process.pid));
    return;
  }
  res.end(String(process.pid));
});
server.keepAliveTimeout = 1000;
server.listen(Number(process.env.PORT), '127.0.0.1');
process.on('SIGTERM', () => { server.close(() => process.exit(0)); server.closeIdleConnections(); });
`;

/** One autoscaled app of the sample. */
export interface AutoscaledApp {
  readonly name: string;
  readonly hostname: string;
  readonly metric: string;
  readonly target: number;
  readonly min: number;
  readonly max: number;
  /** Leave out `scaling.auto` (a fixed count of `min`; `max` is then only a warning). */
  readonly fixed?: boolean;
}

/** The app's infraspec.yaml. */
export function autoscaledSpec(app: AutoscaledApp): string {
  return `name: ${app.name}
deploy: true
processes:
  web:
    port: 8080
    health:
      path: /healthz
      interval: 100ms
      timeout: 1s
    drain:
      timeout: 2s
    scaling:
      min: ${app.min}
${
  app.fixed
    ? ''
    : `      max: ${app.max}
      auto:
        metric: ${app.metric}
        target: ${app.target}
`
}    resources:
      memory: 128
endpoints:
  - url: ${app.hostname}
`;
}
