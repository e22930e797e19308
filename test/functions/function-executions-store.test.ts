// tier: quick
import test from 'ava';
import { openControlStore } from '../../store/open-stores.js';
import {
  completeFunctionExecution,
  deleteFunctionExecution,
  getFunctionExecution,
  insertFunctionExecution,
  listFunctionExecutions,
  listRunningFunctionExecutions,
  markFunctionExecutionPlaced,
  pruneFunctionExecutions,
} from '../../store/control/function-executions.js';
import { tempDir } from '../helpers/temp-dir.js';

function openStore(t: Parameters<typeof tempDir>[0]) {
  const store = openControlStore(tempDir(t));
  t.teardown(() => store.db.close());
  return store.db;
}

const started = (executionId: string, app = 'fns', process = 'echo') => ({
  executionId,
  app,
  process,
  jobId: `${app}-${process}`,
  region: 'local',
  startedAt: '2030-01-01T00:00:00.000Z',
});
const result = {
  status: 'succeeded' as const,
  exitCode: 0,
  output: 'ok\n',
  errorOutput: '',
  outputTruncated: false,
  durationMs: 12,
  finishedAt: '2030-01-01T00:00:01.000Z',
};

test('function executions are recorded running, placed, then completed once', (t) => {
  const db = openStore(t);
  insertFunctionExecution(db, started('e1'));
  t.like(getFunctionExecution(db, 'e1'), {
    status: 'running',
    allocationId: null,
    exitCode: null,
    output: '',
    finishedAt: null,
  });
  markFunctionExecutionPlaced(db, 'e1', { allocationId: 'a1', startedAt: '2030-01-01T00:00:00.500Z' });
  t.like(getFunctionExecution(db, 'e1'), { allocationId: 'a1', startedAt: '2030-01-01T00:00:00.500Z' });
  t.deepEqual(
    listRunningFunctionExecutions(db, 'fns').map((e) => e.executionId),
    ['e1'],
  );
  t.true(completeFunctionExecution(db, 'e1', result));
  t.false(
    completeFunctionExecution(db, 'e1', { ...result, status: 'failed', exitCode: 1 }),
    'a finished record is never rewritten',
  );
  t.like(getFunctionExecution(db, 'e1'), {
    status: 'succeeded',
    exitCode: 0,
    output: 'ok\n',
    durationMs: 12,
    outputTruncated: false,
    finishedAt: result.finishedAt,
  });
  t.deepEqual(listRunningFunctionExecutions(db), []);
  t.false(completeFunctionExecution(db, 'unknown', result));
});

test('function execution history is newest first, filtered by app, process and execution, and paged', (t) => {
  const db = openStore(t);
  for (const id of ['e1', 'e2', 'e3']) insertFunctionExecution(db, started(id));
  insertFunctionExecution(db, started('o1', 'fns', 'other'));
  insertFunctionExecution(db, started('x1', 'else'));
  const ids = (query: Parameters<typeof listFunctionExecutions>[1]) =>
    listFunctionExecutions(db, query).map((e) => e.executionId);
  t.deepEqual(ids({ app: 'fns', limit: 10 }), ['o1', 'e3', 'e2', 'e1']);
  t.deepEqual(ids({ app: 'fns', limit: 2 }), ['o1', 'e3']);
  t.deepEqual(ids({ app: 'fns', limit: 2, offset: 2 }), ['e2', 'e1']);
  t.deepEqual(ids({ app: 'fns', process: 'echo', limit: 10 }), ['e3', 'e2', 'e1']);
  t.deepEqual(ids({ app: 'fns', executionId: 'e2', limit: 10 }), ['e2']);
  t.deepEqual(ids({ app: 'fns', executionId: 'x1', limit: 10 }), [], "another app's execution is not listed");
  deleteFunctionExecution(db, 'e2');
  t.deepEqual(ids({ app: 'fns', process: 'echo', limit: 10 }), ['e3', 'e1']);
});

test('pruning keeps the newest finished executions of an app and every running one', (t) => {
  const db = openStore(t);
  for (const id of ['e1', 'e2', 'e3', 'e4', 'e5']) insertFunctionExecution(db, started(id));
  insertFunctionExecution(db, started('x1', 'else'));
  for (const id of ['e2', 'e3', 'e4', 'e5']) completeFunctionExecution(db, id, result);
  t.is(pruneFunctionExecutions(db, 'fns', 2), 2);
  t.deepEqual(
    listFunctionExecutions(db, { app: 'fns', limit: 10 }).map((e) => e.executionId),
    ['e5', 'e4', 'e1'],
  );
  t.is(pruneFunctionExecutions(db, 'fns', 2), 0);
  t.is(listFunctionExecutions(db, { app: 'else', limit: 10 }).length, 1);
});
