#!/bin/sh
# test-startup.sh - --call-graph dwarf samples taken while programs start,
# most of them in the dynamic loader: perf names ld.so's start-up stacks
# _start;_dl_start;_dl_start_final;_dl_sysdep_start;dl_main;... with the
# functions inlined into _dl_start (from its debug info, when installed)
# under it. Per process, at least as many samples of perfhub collapse's
# output must pass through _dl_start, _dl_start;_dl_start_final, ... as of
# perf's. perf's own walk loses frames in some processes (docs/symbols.md),
# so ours may have more.
# Skips (77) when perf cannot record here or names no _dl_start frame (or
# too few of them even in 100 runs).
set -u
. "${top_srcdir:-.}/tests/symbols/collapse-lib.sh"

rate=20000
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo 0)
[ "$max" -gt 0 ] 2>/dev/null && [ "$max" -lt "$rate" ] && rate=$max
# many short runs of a program with a shared library of its own: the
# loader's work is a large share of the samples. The kernel lowers the
# sample rate on a busy machine: too few samples for a verdict, four
# times the runs once.
for runs in 25 100; do
record "$T/start.data" --call-graph dwarf -F "$rate" -e cpu-clock -- \
	sh -c 'i=0; while [ $i -lt "$1" ]; do "$0" 0; i=$((i+1)); done' "$PROGS/calls_nofp" "$runs" ||
	{ echo "SKIP: perf record --call-graph dwarf failed"; cat "$T/record.log"; exit 77; }

compare startup "$T/start.data" 0 --pid --weight samples -- \
	-F comm,pid,tid,time,event,ip,sym,dso -- --pid
[ -s "$T/startup.ours" ] || exit 1

python3 - "$T/startup.ours" "$T/startup.perf" "$runs" <<'PY'
import sys


def load(path):
    """process -> [(frames, samples)]"""
    out = {}
    for line in open(path):
        key, _, n = line.rstrip('\n').rpartition(' ')
        parts = key.split(';')
        out.setdefault(parts[0], []).append((parts[1:], int(n)))
    return out


def through(stacks, chain):
    """samples whose stack has the frames `chain` one after the other"""
    k = len(chain)
    return sum(n for frames, n in stacks
               if any(frames[i:i + k] == chain for i in range(len(frames) - k + 1)))


ours, perf = load(sys.argv[1]), load(sys.argv[2])
total = sum(through(st, ['_dl_start']) for st in perf.values())
if total == 0:
    print("SKIP: perf names no sample through _dl_start (no ld.so symbols here)")
    sys.exit(77)
if total < 20:
    print("startup: perf names only %d samples through _dl_start in %s runs" % (total, sys.argv[3]))
    sys.exit(3)
# perf stops early or skips frames in some processes (docs/symbols.md), so
# stacks are not paired one to one: per process, at least as many samples
# must pass through each chain as in perf's
short = 0
for proc in sorted(perf):
    for chain in (['_dl_start'], ['_dl_start', '_dl_start_final'],
                  ['_dl_start_final', '_dl_sysdep_start'], ['_dl_sysdep_start', 'dl_main']):
        want = through(perf[proc], chain)
        got = through(ours.get(proc, []), chain)
        if got < want:
            short += want - got
            print("  %s: %d samples through %s, perf %d" % (proc, got, ';'.join(chain), want))
mine = sum(through(st, ['_dl_start']) for st in ours.values())
print("startup: perf %d samples through _dl_start, ours %d; %d of perf's not found"
      % (total, mine, short))
# an inlined function of _dl_start without _dl_start above it
orphans = sum(n for st in ours.values() for frames, n in st
              if '_dl_start_final' in frames and '_dl_start' not in frames)
if orphans:
    print("FAIL startup: %d samples name _dl_start_final without _dl_start" % orphans)
sys.exit(1 if short or orphans else 0)
PY
rc=$?
[ $rc -eq 3 ] || break
done
[ $rc -eq 3 ] && { echo "SKIP: too few samples of the loader (sample rate $rate Hz, lowered by the kernel?)"; exit 77; }
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail=1
exit $fail
