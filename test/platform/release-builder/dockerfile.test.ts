// tier: quick
import test from 'ava';
import {
  effectiveCommand,
  hostPathFor,
  parseDockerfile,
  planNativeBuild,
  substitute,
} from '../../../platform/release-builder/index.js';

test('parseDockerfile joins continuations, skips comments and tells exec form from shell form', (t) => {
  const parsed = parseDockerfile(
    [
      '# escape=\\',
      '',
      'FROM node:20',
      'RUN apt-get update && \\',
      '  # a comment inside',
      '    apt-get install -y curl',
      'CMD ["node", "a.js"]',
      'ENTRYPOINT [not json',
    ].join('\n'),
  );
  t.deepEqual(
    parsed.map((i) => [i.keyword, i.args, i.json ?? null, i.line]),
    [
      ['FROM', 'node:20', null, 3],
      ['RUN', 'apt-get update && apt-get install -y curl', null, 4],
      ['CMD', '["node", "a.js"]', ['node', 'a.js'], 7],
      ['ENTRYPOINT', '[not json', null, 8],
    ],
  );
});

test('parseDockerfile honours the backtick escape directive', (t) => {
  const [run] = parseDockerfile('# escape=`\nRUN echo a `\n  b\n');
  t.is(run!.args, 'echo a b');
});

test('substitute expands plain, braced and defaulted variables', (t) => {
  const vars = { A: 'x', EMPTY: '' };
  t.is(substitute('$A/${A}/${B:-dflt}/${EMPTY:-e}/${A:+alt}/${B:+alt}/\\$A', vars), 'x/x/dflt/e/alt//$A');
});

test('planNativeBuild applies ARG defaults and overrides, both ENV forms and relative WORKDIRs', (t) => {
  const plan = planNativeBuild(
    parseDockerfile(
      [
        'FROM python:3.12',
        'ARG VERSION=1.0',
        'ARG TARGET',
        'ENV APP_VERSION=$VERSION NAME="my app" PLAIN=a\\ b',
        'ENV LEGACY value with spaces',
        'WORKDIR /opt/${TARGET:-svc}',
        'COPY . .',
        'RUN make build',
        'WORKDIR web',
        'RUN ["npm", "ci"]',
        'ENTRYPOINT ["python", "-m", "svc"]',
        'CMD ["--port", "8000"]',
      ].join('\n'),
    ),
    { TARGET: 'demo' },
  );
  t.deepEqual(plan.env, { APP_VERSION: '1.0', NAME: 'my app', PLAIN: 'a b', LEGACY: 'value with spaces' });
  t.is(plan.appRoot, '/opt/demo');
  t.is(plan.workdir, '/opt/demo/web');
  t.deepEqual(
    plan.runs.map((r) => [r.argv, r.workdir, r.env.VERSION]),
    [
      [['/bin/sh', '-c', 'make build'], '/opt/demo', '1.0'],
      [['npm', 'ci'], '/opt/demo/web', '1.0'],
    ],
  );
  t.deepEqual(effectiveCommand(plan.entrypoint, plan.cmd), ['python', '-m', 'svc', '--port', '8000']);
});

test('effectiveCommand follows Docker rules for shell-form CMD and ENTRYPOINT', (t) => {
  t.deepEqual(effectiveCommand(null, ['/bin/sh', '-c', 'node a.js']), ['/bin/sh', '-c', 'node a.js']);
  t.deepEqual(effectiveCommand(['/bin/sh', '-c', 'run.sh'], ['ignored']), ['/bin/sh', '-c', 'run.sh']);
  t.is(effectiveCommand(null, null), null);
});

test('planNativeBuild resets ENV and WORKDIR per stage and notes the flattening', (t) => {
  const plan = planNativeBuild(
    parseDockerfile(
      'FROM a AS build\nENV X=1\nWORKDIR /b\nRUN make\nFROM b\nWORKDIR /app\nCOPY --from=build /b/out .\nCMD node x.js\n',
    ),
  );
  t.deepEqual(plan.env, {});
  t.is(plan.appRoot, '/b');
  t.deepEqual(plan.cmd, ['/bin/sh', '-c', 'node x.js']);
  t.true(plan.notes.some((n) => /multi-stage build flattened/.test(n)));
});

test('hostPathFor maps container paths under the app root into the app dir and others to the app dir itself', (t) => {
  t.deepEqual(hostPathFor('/r/app', '/srv', '/srv/web'), { path: '/r/app/web', outside: false });
  t.deepEqual(hostPathFor('/r/app', '/srv', '/srv'), { path: '/r/app', outside: false });
  t.deepEqual(hostPathFor('/r/app', '/srv', '/etc'), { path: '/r/app', outside: true });
});
