#!/usr/bin/perl
# `npm test` runs mocha under this: `perl test/utils/reap.pl mocha ARGS...`.
#
# The tests start daemons detached (`amesh up --detach`): the CLI that started one
# exits, so the daemon's parent becomes the nearest "child subreaper", else PID 1.
# When such a daemon exits (`amesh down`, kill -9) it stays a zombie until that
# parent reaps it, and a zombie still answers kill(pid, 0): `amesh down`, `amesh up`'s
# running-daemon check and the tests' "pid gone" waits all wait for the reaping.
# Some machines' PID 1 reaps late (measured on the 2-core test machine: a daemon
# that exited within 50 ms was reaped 1.4-2 s later, on every stop and kill -9 of the
# suite). This process makes itself the subreaper of everything mocha starts and
# reaps as soon as anything exits; nothing else changes (same processes, same
# signals, mocha's exit status is this one's).
#
# Linux only (prctl PR_SET_CHILD_SUBREAPER); elsewhere, or if the call fails, it only
# runs mocha and orphans go to PID 1 as before.
use strict;
use warnings;
use POSIX ();

my %SYS_PRCTL = (x86_64 => 157, aarch64 => 167);
my $PR_SET_CHILD_SUBREAPER = 36;

die "usage: perl reap.pl COMMAND [ARGS...]\n" unless @ARGV;
my $arch = (POSIX::uname())[4];
if ($^O eq 'linux' && exists $SYS_PRCTL{$arch}) {
  syscall($SYS_PRCTL{$arch}, $PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

my $child = fork();
die "reap.pl: fork: $!\n" unless defined $child;
if ($child == 0) {
  exec { $ARGV[0] } @ARGV or die "reap.pl: cannot run $ARGV[0]: $!\n";
}
# a signal to the test command (Ctrl-C, CI's timeout) goes to mocha, which ends the run
for my $sig (qw(INT TERM HUP)) { $SIG{$sig} = sub { kill $sig, $child } }

my $status;
while (1) {
  my $pid = waitpid(-1, 0);
  if ($pid == -1) {
    next if $!{EINTR};
    last;
  }
  if ($pid == $child) { $status = $?; last }
}
die "reap.pl: lost $ARGV[0]\n" unless defined $status;
exit(128 + ($status & 127)) if $status & 127;
exit($status >> 8);
