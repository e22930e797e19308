// tier: quick
import fs from 'node:fs';
import path from 'node:path';
import test from 'ava';
import { waitForAllocations, type Allocation } from '../../../domain/scheduler/index.js';
import { cpuShares, cpuWeight, detectCpuWeights } from '../../../platform/local-scheduler/tasks/cpu-weight.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { openDriver, serviceGroup, serviceJob } from './fixtures.js';

test('resources.cpu maps to cgroup weights in proportion: 1 MHz a share, v2 weight scaled from 1,024 to 100', (t) => {
  t.deepEqual([1, 100, 1024, 4000, 10_000_000].map(cpuShares), [2, 100, 1024, 4000, 262_144]);
  t.deepEqual([1, 100, 1024, 4000, 10_000_000].map(cpuWeight), [1, 10, 100, 391, 10_000]);
});

test('detection picks v2 when the cpu controller is there, else v1, else none; placing writes the weight and the pid', (t) => {
  const v2 = tempDir(t);
  fs.writeFileSync(path.join(v2, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
  const weightsV2 = detectCpuWeights(v2);
  t.is(weightsV2.kind, 'cgroup-v2');
  t.is(fs.readFileSync(path.join(v2, 'svc-apps', 'cgroup.subtree_control'), 'utf8'), '+cpu');
  const group = weightsV2.place('alloc-1', 4242, 2048)!;
  t.is(fs.readFileSync(path.join(group, 'cpu.weight'), 'utf8'), '200');
  t.is(fs.readFileSync(path.join(group, 'cgroup.procs'), 'utf8'), '4242');

  const v1 = tempDir(t);
  fs.mkdirSync(path.join(v1, 'cpu'));
  fs.writeFileSync(path.join(v1, 'cpu', 'cpu.shares'), '1024');
  const weightsV1 = detectCpuWeights(v1);
  t.is(weightsV1.kind, 'cgroup-v1');
  const v1Group = weightsV1.place('alloc-2', 77, 500)!;
  t.is(v1Group, path.join(v1, 'cpu', 'svc-apps', 'alloc-2'));
  t.is(fs.readFileSync(path.join(v1Group, 'cpu.shares'), 'utf8'), '500');
  // A group whose files are plain files here is not empty; release leaves what it cannot remove.
  weightsV1.release('alloc-2');

  const none = detectCpuWeights(tempDir(t));
  t.is(none.kind, 'none');
  t.regex(none.reason!, /no writable cgroup cpu controller/);
  t.is(none.place('x', 1, 100), undefined);
});

(process.getuid?.() === 0 ? test : test.skip)(
  'detection uses the cgroup systemd delegated to a service user: the process moves into a leaf and apps get groups beside it',
  (t) => {
    const root = tempDir(t);
    fs.writeFileSync(path.join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    const own = path.join(root, 'system.slice', 'svc.service');
    fs.mkdirSync(own, { recursive: true });
    fs.writeFileSync(path.join(own, 'cgroup.controllers'), 'cpu memory pids\n');
    fs.chownSync(own, 990, 990);
    const who = { uid: 990, pid: 4242, cgroup: '0::/system.slice/svc.service\n' };
    const weights = detectCpuWeights(root, who);
    t.is(weights.kind, 'cgroup-v2');
    t.is(fs.readFileSync(path.join(own, 'supervisor', 'cgroup.procs'), 'utf8'), '4242');
    t.is(fs.readFileSync(path.join(own, 'cgroup.subtree_control'), 'utf8'), '+cpu');
    t.is(weights.place('alloc-9', 4343, 1024), path.join(own, 'svc-apps', 'alloc-9'));
    t.false(fs.existsSync(path.join(root, 'svc-apps')), 'the root of the hierarchy was touched');

    // Not delegated: owned by another user, or the process is in the root group.
    fs.chownSync(own, 0, 0);
    t.not(detectCpuWeights(root, who).place('alloc-10', 1, 100), path.join(own, 'svc-apps', 'alloc-10'));
    t.is(detectCpuWeights(tempDir(t), { ...who, cgroup: '0::/\n' }).kind, 'none');
  },
);

const host = detectCpuWeights();
// Needs a writable cgroup cpu controller (root with cgroups mounted), as the driver itself does.
(host.kind === 'none' ? test.skip : test)(
  'under contention two processes share a CPU in proportion to their resources.cpu',
  async (t) => {
    const burn = 'for (;;) {}';
    const { driver, appDir } = await openDriver(t, { 'burn.cjs': burn });
    // Both pinned to CPU 0, so they contend with each other whatever else the host runs.
    const group = (name: string, cpuMhz: number) => {
      const base = serviceGroup({ name, command: `exec taskset -c 0 ${process.execPath} burn.cjs`, workdir: appDir });
      return { ...base, task: { ...base.task, resources: { cpuMhz, memoryMb: 256 } } };
    };
    await driver.submitJob(serviceJob('burners', group('heavy', 2048), group('light', 256)));
    const allocations = await waitForAllocations(
      driver,
      (a: readonly Allocation[]) =>
        a.length === 2 && a.every((x) => x.status === 'running' && x.task.pid !== undefined),
      { filter: { jobId: 'burners' }, timeoutMs: 10_000 },
    );
    const pid = (name: string) => allocations.find((a) => a.taskGroup === name)!.task.pid!;
    for (const a of allocations)
      t.regex(fs.readFileSync(`/proc/${a.task.pid}/cgroup`, 'utf8'), new RegExp(`svc-apps/${a.id}`));
    const cpuTicks = (p: number) => {
      const fields = fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return Number(fields[11]) + Number(fields[12]);
    };
    const start = { heavy: cpuTicks(pid('heavy')), light: cpuTicks(pid('light')) };
    // CPU shares show only over time: sample the two processes' CPU after a second of contention.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    const heavy = cpuTicks(pid('heavy')) - start.heavy;
    const light = cpuTicks(pid('light')) - start.light;
    t.log(`heavy ${heavy} ticks, light ${light} (weights 2048:256)`);
    t.true(heavy > light * 2, `heavy used ${heavy} ticks, light ${light} (weights 2048:256)`);
  },
);

(host.kind === 'none' ? test.skip : test)(
  "a task is in its allocation's group from its first process on: the wrapper joins it before the task runs",
  async (t) => {
    const { driver, appDir, dataDir } = await openDriver(t);
    // The task's first process forks `cat` at once: the child reads the group it was born in.
    const group = serviceGroup({
      name: 'first',
      command: 'cat /proc/self/cgroup > "$SVC_TASK_DIR/born-in.txt"; exec sleep 60',
      workdir: appDir,
      check: false,
    });
    await driver.submitJob(serviceJob('joins', group));
    const [allocation] = await waitForAllocations(
      driver,
      (a: readonly Allocation[]) => a.length === 1 && a[0]!.status === 'running',
      { filter: { jobId: 'joins' }, timeoutMs: 10_000 },
    );
    const file = path.join(dataDir, 'allocs', allocation!.id, 'local', 'born-in.txt');
    const deadline = Date.now() + 10_000;
    while (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') === '') {
      if (Date.now() > deadline) t.fail(`${file} was not written`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    t.regex(fs.readFileSync(file, 'utf8'), new RegExp(`svc-apps/${allocation!.id}`));
    t.regex(fs.readFileSync(`/proc/${allocation!.task.pid}/cgroup`, 'utf8'), new RegExp(`svc-apps/${allocation!.id}`));
  },
);
