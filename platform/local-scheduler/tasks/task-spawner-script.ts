/**
 * The task spawner helper's Perl script (ADR 0199, ADR 0201): what the helper, its forked children
 * and its spare processes run, and the system call numbers it sandboxes tasks with.
 */
/**
 * The helper. Requests on stdin: a decimal length, a newline, then that many bytes of NUL-separated
 * fields: id, cwd, stdout path, stderr path, cgroup folder, weight file, weight value, the sandbox
 * (applied or not, nofile, nproc, uid, gid, groups, private mounts or not, the number of binds, then
 * each bind's source and target), argc, the argv, then `NAME=value` environment entries. Answers on stdout, one line each:
 * `spawned <id> <pid> <warning>`, `failed <id> <reason>`, `exit <pid> <code> <signal>`. A request
 * `spare`, NUL, a cgroup folder forks a spare process that joins that group now and takes the next
 * start request for the same group (ADR 0201); it is not answered.
 * EOF on stdin ends it; its tasks run on (re-parented to init) for the next driver to re-adopt, and
 * its spares exit (their request pipes read end of file).
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
export const SYSCALLS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
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
