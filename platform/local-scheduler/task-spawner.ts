/**
 * Task spawner: a small long-lived helper process (a Perl script, 3-4 MB; Perl is part of every
 * Debian and Ubuntu base system) that forks and execs tasks for the local driver, so the control
 * plane never forks itself (ADR 0199). libuv forks the calling process for every `spawn()` and
 * blocks the event loop until the child has exec'd: for a control plane of a few hundred MB that is
 * page-table copying proportional to its mappings, and under load the wait for the child to be
 * scheduled. The helper forks a process of a few MB instead, off the control plane's loop.
 *
 * The child does what libuv's detached spawn did (new session, stdin from /dev/null, stdout and
 * stderr appended to the allocation's log files, the working directory, exactly the given
 * environment), and joins the allocation's CPU-weight cgroup itself before it execs, so every process
 * of the task starts in the group. The helper reports each pid once the exec succeeded (or why it
 * failed, through a close-on-exec pipe as libuv does) and each exit as `waitpid` saw it.
 *
 * When the helper cannot be started or dies, the driver spawns directly as before; tasks launched
 * through a helper that died are watched through `/proc` like re-adopted ones.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Readable, Writable } from 'node:stream';

/**
 * The helper. Requests on stdin: a decimal length, a newline, then that many bytes of NUL-separated
 * fields: id, cwd, stdout path, stderr path, cgroup folder, weight file, weight value, the sandbox
 * (applied or not, nofile, nproc, uid, gid, groups, private mounts or not, the number of binds, then
 * each bind's source and target), argc, the argv, then `NAME=value` environment entries. Answers on stdout, one line each:
 * `spawned <id> <pid> <warning>`, `failed <id> <reason>`, `exit <pid> <code> <signal>`.
 * EOF on stdin ends it; its tasks run on (re-parented to init) for the next driver to re-adopt.
 */
const SCRIPT = String.raw`
use strict; use warnings; use POSIX ();
# System call numbers of this architecture (empty where the helper does not sandbox itself).
my %NR = (__NR__);
# Copies: syscall() may write through a string argument, and a literal is read-only.
sub sys { my ($name, @args) = @_; return syscall($NR{$name}, @args) != -1; }
$| = 1;
# SIGCHLD interrupts select(); exits are collected by reap() in the loop, after each spawn's answer.
$SIG{CHLD} = sub {};
# A spare that died makes its pipe's write fail (EPIPE), not the helper.
$SIG{PIPE} = 'IGNORE';
# Spare processes forked ahead, each already in its own cgroup (ADR 0201): group => [pid, request
# pipe's write end, status pipe's read end]. In a spare, the group it joined.
my %spare;
my $joined = '';
my $buf = '';
my $rin = ''; vec($rin, fileno(STDIN), 1) = 1;
sub line { my $s = join(' ', @_); $s =~ s/[\r\n]+/ /g; print $s, "\n"; }
sub reap {
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
    my $s = $?;
    line('exit', $pid, ($s & 127) ? -1 : ($s >> 8), $s & 127);
  }
}
# In the forked child: the task's process set-up, then exec; never returns.
sub child {
  my ($w, $r, $cwd, $out, $err, $group, $file, $value, $sandbox, $nofile, $nproc, $uid, $gid, $groups, $ns, $bindsRef, $argvRef, $envRef) = @_;
  my @binds = @$bindsRef;
  my @argv = @$argvRef;
  close $r;
  # An ignored signal stays ignored across exec: the task starts with SIGPIPE's default, as libuv's children do.
  $SIG{PIPE} = 'DEFAULT';
  # As Node words a failed spawn: "spawn <file> <errno name>".
  my $fail = sub { my ($name) = grep { $!{$_} } keys %!; syswrite($w, "e:spawn $argv[0] " . ($name // ($! + 0)) . "\n"); POSIX::_exit(127); };
  POSIX::setsid();
  open(STDIN, '<', '/dev/null') or $fail->();
  open(STDOUT, '>>', $out) or $fail->();
  open(STDERR, '>>', $err) or $fail->();
  chdir($cwd) or $fail->();
  if ($group ne '') {
    # A weight is a refinement: the task runs without one rather than not at all. A spare process
    # joined its group ahead (ADR 0201): only the weight is written, the migration is done.
    my ($f, $p);
    my $ok = (mkdir($group) || $!{EEXIST})
      && open($f, '>', "$group/$file") && (print $f $value) && close($f)
      && ($joined eq $group || (open($p, '>', "$group/cgroup.procs") && (print $p $$) && close($p)));
    syswrite($w, "w:CPU weight not applied: $!\n") unless $ok;
  }
  if ($sandbox eq '1') {
    # What unshare --mount --propagation private, mount --bind, prlimit and setpriv did, in this
    # process (ADR 0047, 0199). Numbers are passed with +0: syscall() passes a string as a pointer.
    if ($ns eq '1') {
      sys('unshare', 0x20000) or $fail->();
      sys('mount', 'none', '/', 0, 0x4000 | 0x40000, 0) or $fail->();
      for (my $i = 0; $i < @binds; $i += 2) { sys('mount', $binds[$i], $binds[$i + 1], 0, 0x1000, 0) or $fail->(); }
    }
    sys('setrlimit', 7, pack('Q2', $nofile, $nofile)) or $fail->();
    if ($uid ne '') {
      sys('setrlimit', 6, pack('Q2', $nproc, $nproc)) or $fail->();
      my @g = grep { length } split(/,/, $groups);
      (@g ? sys('setgroups', scalar(@g), pack('L*', @g)) : sys('setgroups', 0, 0)) or $fail->();
      sys('setresgid', $gid + 0, $gid + 0, $gid + 0) or $fail->();
      sys('setresuid', $uid + 0, $uid + 0, $uid + 0) or $fail->();
      sys('prctl', 38, 1, 0, 0, 0) or $fail->();
      $! = 1;
      $fail->() if $< != $uid || $> != $uid;
    }
  }
  %ENV = %$envRef;
  { no warnings 'exec'; exec { $argv[0] } @argv; }
  $fail->();
}
# The fields of a start request, as child() takes them (after the status pipe's two ends).
sub fields {
  my ($cwd, $out, $err, $group, $file, $value, $sandbox, $nofile, $nproc, $uid, $gid, $groups, $ns, $binds, @rest) = @_;
  my @binds = splice(@rest, 0, 2 * $binds);
  my $argc = shift(@rest);
  my @argv = splice(@rest, 0, $argc);
  my %env;
  for (@rest) { my $i = index($_, '='); $env{substr($_, 0, $i)} = substr($_, $i + 1) if $i > 0; }
  return ($cwd, $out, $err, $group, $file, $value, $sandbox, $nofile, $nproc, $uid, $gid, $groups, $ns, \@binds, \@argv, \%env);
}
# In a forked child: the task's set-up and exec; never returns into the helper's loop, whatever fails.
sub run { my ($w, $r, @f) = @_; eval { child($w, $r, @f) }; my $argv = $f[14]; syswrite($w, "e:spawn $argv->[0] EINVAL\n"); POSIX::_exit(127); }
# Forks a spare that joins \`group\` now (the migration waits for an RCU grace period, 10-15 ms) and
# then waits for the start request of the allocation that takes the group; EOF: the helper is gone.
sub prefork {
  my ($group) = @_;
  return if $group eq '' || exists $spare{$group};
  my ($qr, $qw, $sr, $sw);
  pipe($qr, $qw) or return;
  pipe($sr, $sw) or return;
  my $pid = fork();
  return unless defined $pid;
  if ($pid == 0) {
    eval {
      close $qw; close $sr;
      for (values %spare) { close $_->[1]; close $_->[2]; }
      %spare = ();
      POSIX::setsid();
      open(STDIN, '<', '/dev/null'); open(STDOUT, '>', '/dev/null');
      my $p;
      $joined = $group if (mkdir($group) || $!{EEXIST}) && open($p, '>', "$group/cgroup.procs") && (print $p $$) && close($p);
      my $msg = '';
      while (1) { my $n = sysread($qr, $msg, 65536, length $msg); next if !defined $n && $!{EINTR}; last if !$n; }
      POSIX::_exit(0) if $msg eq '';
      my (undef, @rest) = split(/\0/, $msg, -1);
      run($sw, $qr, fields(@rest));
    };
    POSIX::_exit(127);
  }
  close $qr; close $sw;
  $spare{$group} = [$pid, $qw, $sr];
}
sub launch {
  my ($id, @rest) = @_;
  return prefork($rest[0]) if $id eq 'spare';
  my @f = fields(@rest);
  my $group = $f[3];
  my ($r, $w, $pid);
  if ($group ne '' && exists $spare{$group}) {
    # The spare joined this group ahead: it gets the request and execs; no migration waits now.
    my $s = delete $spare{$group};
    my $msg = join("\0", $id, @rest);
    if ((syswrite($s->[1], $msg) // -1) == length $msg) { ($pid, $r) = ($s->[0], $s->[2]); }
    else { close $s->[2]; kill('KILL', $s->[0]); }
    close $s->[1];
  }
  if (!defined $pid) {
    if (!pipe($r, $w)) { line('failed', $id, "pipe: $!"); return; }
    $pid = fork();
    if (!defined $pid) { line('failed', $id, "fork: $!"); return; }
    run($w, $r, @f) if $pid == 0;
    close $w;
  }
  my $status = '';
  while (1) {
    my $n = sysread($r, $status, 4096, length $status);
    if (!defined $n) { next if $!{EINTR}; last; }
    last if $n == 0;
  }
  close $r;
  my ($error) = $status =~ /^e:(.*)$/m;
  my ($warning) = $status =~ /^w:(.*)$/m;
  if (defined $error) { waitpid($pid, 0); line('failed', $id, $error); return; }
  line('spawned', $id, $pid, $warning // '');
}
while (1) {
  reap();
  my $n = select(my $rout = $rin, undef, undef, 0.25);
  next if $n <= 0;
  my $got = sysread(STDIN, $buf, 65536, length $buf);
  if (!defined $got) { next if $!{EINTR}; last; }
  last if $got == 0;
  while ($buf =~ /^(\d+)\n/) {
    my $start = length($1) + 1;
    my $len = $1;
    last if length($buf) < $start + $len;
    my $msg = substr($buf, $start, $len);
    substr($buf, 0, $start + $len) = '';
    launch(split(/\0/, $msg, -1));
  }
}
`;

/**
 * System call numbers the helper needs to sandbox a task itself, by Node's name of the architecture
 * (`asm/unistd_64.h` on x86-64, `asm-generic/unistd.h` on arm64).
 */
const SYSCALLS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  x64: { unshare: 272, mount: 165, setrlimit: 160, setgroups: 116, setresgid: 119, setresuid: 117, prctl: 157 },
  arm64: { unshare: 97, mount: 40, setrlimit: 164, setgroups: 159, setresgid: 149, setresuid: 147, prctl: 167 },
};

/** The helper's script for `arch`; it sandboxes tasks itself only where {@link SYSCALLS} knows the architecture. */
export function spawnerScript(arch: string = process.arch): string {
  const table = SYSCALLS[arch] ?? {};
  return SCRIPT.replace(
    '__NR__',
    Object.entries(table)
      .map(([name, number]) => `${name} => ${number}`)
      .join(', '),
  );
}

/**
 * The sandbox of ADR 0047 applied by the helper's child before it execs the task, in place of the
 * wrapper chain (`unshare`, the mount shell, `prlimit`, `setpriv`): a private mount namespace with
 * read-write bind mounts, the rlimits, then the user without other groups and with no new privileges.
 */
export interface SpawnSandbox {
  /** A private mount namespace (private propagation) with these read-write binds, in order; undefined: none. */
  readonly binds?: readonly { readonly source: string; readonly target: string }[];
  /** `RLIMIT_NOFILE`, soft = hard. */
  readonly nofile: number;
  /** The user to become, and `RLIMIT_NPROC` (applied with a user only); undefined: stay this user. */
  readonly identity?: {
    readonly uid: number;
    readonly gid: number;
    readonly groups: readonly number[];
    readonly nproc: number;
  };
}

/** What to start, as `child_process.spawn` with `detached: true` and output appended to two files would. */
export interface SpawnRequest {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  /** Appended to (created when missing). */
  readonly stdoutPath: string;
  readonly stderrPath: string;
  /** The cgroup the child joins before it execs: the folder (created), a weight file and its value. */
  readonly cgroup?: { readonly group: string; readonly file: string; readonly value: string };
  /** Applied by the child before it execs `file` (only when {@link TaskSpawner.sandboxes}). */
  readonly sandbox?: SpawnSandbox;
}

/** A task the helper started. */
export interface SpawnedTask {
  readonly pid: number;
  /** Why the CPU weight was not applied, when it was asked for and failed. */
  readonly warning?: string;
}

/** Follows one spawned task until its exit, or until the helper is gone (then nobody reports it). */
export interface TaskWatch {
  exit(code: number | null, signal: NodeJS.Signals | null): void;
  /** The helper died: this task's exit will not be reported (watch it through `/proc`). */
  lost(): void;
}

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(os.constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]),
);

/** The driver's spawner helper: one per driver, started once. */
export class TaskSpawner {
  readonly #child: ChildProcessByStdio<Writable, Readable, null>;
  readonly #pending = new Map<string, { resolve(task: SpawnedTask): void; reject(error: Error): void }>();
  readonly #watches = new Map<number, TaskWatch>();
  #next = 0;
  #alive = true;
  #buffer = '';

  private constructor(child: ChildProcessByStdio<Writable, Readable, null>) {
    this.#child = child;
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => this.#read(chunk));
    child.stdin.on('error', () => this.#gone());
    child.once('error', () => this.#gone());
    child.once('exit', () => this.#gone());
    // Neither the helper nor its pipes keep the platform alive, except while a start awaits its answer.
    child.unref();
    this.#output().unref();
    (child.stdin as Writable & { unref?(): void }).unref?.();
  }

  /** True when the helper applies a {@link SpawnSandbox} itself (a known architecture). */
  get sandboxes(): boolean {
    return SYSCALLS[process.arch] !== undefined;
  }

  /** Starts the helper (`perl`); undefined when it cannot be started here. */
  static start(perl = 'perl'): TaskSpawner | undefined {
    try {
      const child = spawn(perl, ['-e', spawnerScript()], { stdio: ['pipe', 'pipe', 'inherit'] });
      if (child.pid === undefined) {
        child.once('error', () => undefined);
        return undefined;
      }
      return new TaskSpawner(child);
    } catch {
      return undefined;
    }
  }

  /** True while the helper runs. */
  get alive(): boolean {
    return this.#alive;
  }

  /** The helper's pid (tests). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /**
   * Starts a task; resolves once it exec'd (its pid is the program's, after its wrappers exec
   * in turn), rejects when it could not be started. `watch` follows its exit.
   */
  spawn(request: SpawnRequest, watch: TaskWatch): Promise<SpawnedTask> {
    if (!this.#alive) return Promise.reject(new SpawnerGoneError());
    const id = String((this.#next += 1));
    const fields = [
      id,
      request.cwd,
      request.stdoutPath,
      request.stderrPath,
      request.cgroup?.group ?? '',
      request.cgroup?.file ?? '',
      request.cgroup?.value ?? '',
      ...sandboxFields(request.sandbox),
      String(request.args.length + 1),
      request.file,
      ...request.args,
      ...Object.entries(request.env).map(([name, value]) => `${name}=${value}`),
    ];
    if (fields.some((field) => field.includes('\0')))
      return Promise.reject(new Error('an argument or environment value contains a NUL byte'));
    const payload = Buffer.from(fields.join('\0'), 'utf8');
    return new Promise<SpawnedTask>((resolve, reject) => {
      this.#pending.set(id, {
        resolve: (task) => {
          this.#watches.set(task.pid, watch);
          resolve(task);
        },
        reject,
      });
      if (this.#pending.size === 1) this.#output().ref();
      this.#child.stdin.write(Buffer.concat([Buffer.from(`${payload.length}\n`), payload]));
      this.#refillSpares();
    });
  }

  /**
   * Keeps `count` spare processes forked ahead, each already in the cgroup `group(id)` gives for a
   * fresh id (ADR 0201): joining a cgroup waits for an RCU grace period in the kernel (10-15 ms
   * here), which a start then skips. {@link takeSpare} hands out the id for a new allocation, and
   * its start (a request with that cgroup) goes to the spare. Nothing is kept when `group` gives none.
   */
  keepSpares(count: number, group: (id: string) => string | undefined): void {
    this.#spareCount = count;
    this.#spareGroup = group;
    this.#refillSpares();
  }

  /** The id of a spare that joined its cgroup ahead (an allocation takes it as its own id), if one is ready. */
  takeSpare(): string | undefined {
    if (!this.#alive) return undefined;
    // The next spare is asked for after the start request that takes this one (spawn): the helper
    // forks it once that start exec'd, not before.
    return this.#spares.shift();
  }

  /** Ids of spares not handed out (their cgroups are released when the helper ends). */
  unusedSpares(): readonly string[] {
    return this.#spares;
  }

  /** Ids of spares ready, not handed out yet. */
  #spares: string[] = [];
  #spareCount = 0;
  #spareGroup: ((id: string) => string | undefined) | undefined;

  #refillSpares(): void {
    while (this.#alive && this.#spareGroup !== undefined && this.#spares.length < this.#spareCount) {
      const id = randomUUID();
      const group = this.#spareGroup(id);
      if (group === undefined || group.includes('\0')) return;
      this.#spares.push(id);
      const payload = Buffer.from(['spare', group].join('\0'), 'utf8');
      this.#child.stdin.write(Buffer.concat([Buffer.from(`${payload.length}\n`), payload]));
    }
  }

  /** Ends the helper; the tasks it started keep running. */
  close(): void {
    if (!this.#alive) return;
    this.#child.stdin.end();
    this.#gone();
  }

  #output(): { ref(): void; unref(): void } {
    return this.#child.stdout as unknown as { ref(): void; unref(): void };
  }

  #read(chunk: string): void {
    this.#buffer += chunk;
    let newline: number;
    while ((newline = this.#buffer.indexOf('\n')) >= 0) {
      const line = this.#buffer.slice(0, newline);
      this.#buffer = this.#buffer.slice(newline + 1);
      this.#answer(line);
    }
  }

  #answer(line: string): void {
    const [kind, a, b, ...rest] = line.split(' ');
    if (kind === 'exit') {
      const pid = Number(a);
      const watch = this.#watches.get(pid);
      this.#watches.delete(pid);
      const signal = Number(rest[0]);
      watch?.exit(signal > 0 ? null : Number(b), signal > 0 ? (SIGNAL_NAMES.get(signal) ?? 'SIGKILL') : null);
      return;
    }
    const pending = this.#pending.get(a ?? '');
    if (!pending) return;
    this.#pending.delete(a!);
    if (this.#pending.size === 0) this.#output().unref();
    if (kind === 'spawned') {
      const warning = rest.join(' ');
      pending.resolve({ pid: Number(b), ...(warning ? { warning } : {}) });
    } else pending.reject(new Error([b, ...rest].join(' ')));
  }

  #gone(): void {
    if (!this.#alive) return;
    this.#alive = false;
    for (const pending of this.#pending.values()) pending.reject(new SpawnerGoneError());
    this.#pending.clear();
    const watches = [...this.#watches.values()];
    this.#watches.clear();
    for (const watch of watches) watch.lost();
  }
}

function sandboxFields(sandbox: SpawnSandbox | undefined): string[] {
  if (sandbox === undefined) return ['0', '', '', '', '', '', '0', '0'];
  const { identity, binds } = sandbox;
  return [
    '1',
    String(sandbox.nofile),
    String(identity?.nproc ?? ''),
    String(identity?.uid ?? ''),
    String(identity?.gid ?? ''),
    identity?.groups.join(',') ?? '',
    binds === undefined ? '0' : '1',
    String(binds?.length ?? 0),
    ...(binds ?? []).flatMap((bind) => [bind.source, bind.target]),
  ];
}

/** The helper was gone before it answered: the caller spawns directly instead. */
export class SpawnerGoneError extends Error {
  constructor() {
    super('the task spawner is not running');
    this.name = 'SpawnerGoneError';
  }
}
