#!/bin/sh
# test-startup.sh - --call-graph dwarf samples taken while programs start,
# most of them in the dynamic loader: perf names ld.so's start-up stacks
# _start;_dl_start;_dl_start_final;_dl_sysdep_start;dl_main;... with the
# functions inlined into _dl_start (from its debug info, when installed)
# under it. Per process, every start-up stack perf has through _dl_start
# must be in perfhub collapse's output at least as often. perf's own walk
# loses frames in some processes (docs/symbols.md), so ours may have more.
# Skips (77) when perf cannot record here or names no _dl_start frame.
set -u
. "${top_srcdir:-.}/tests/symbols/collapse-lib.sh"

# the loader's start-up frames, outermost first (the projection keeps these)
STARTUP=_start,_dl_start,_dl_start_final,_dl_sysdep_start,dl_main

rate=20000
max=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo 0)
[ "$max" -gt 0 ] 2>/dev/null && [ "$max" -lt "$rate" ] && rate=$max
# many short runs of a program with a shared library of its own: the
# loader's work is a large share of the samples
record "$T/start.data" --call-graph dwarf -F "$rate" -e cpu-clock -- \
	sh -c 'i=0; while [ $i -lt 25 ]; do "$0" 0; i=$((i+1)); done' "$PROGS/calls_nofp" ||
	{ echo "SKIP: perf record --call-graph dwarf failed"; cat "$T/record.log"; exit 77; }

compare startup "$T/start.data" 0 --pid --weight samples -- \
	-F comm,pid,tid,time,event,ip,sym,dso -- --pid
[ -s "$T/startup.ours" ] || exit 1

python3 - "$T/startup.ours" "$T/startup.perf" "$STARTUP" <<'PY'
import sys
frames = sys.argv[3].split(',')


def project(path):
    """process;start-up frames -> samples, other frames dropped"""
    out = {}
    for line in open(path):
        key, _, n = line.rstrip('\n').rpartition(' ')
        parts = key.split(';')
        kept = ';'.join([parts[0]] + [f for f in parts[1:] if f in frames])
        out[kept] = out.get(kept, 0) + int(n)
    return out


ours, perf = project(sys.argv[1]), project(sys.argv[2])
through = {k: v for k, v in perf.items() if ';_dl_start;' in k + ';'}
total = sum(through.values())
if total < 20:
    print("SKIP: perf names only %d samples through _dl_start (no ld.so symbols?)" % total)
    sys.exit(77)
short = 0
for k, v in sorted(through.items()):
    if ours.get(k, 0) < v:
        short += v - ours.get(k, 0)
        print("  missing: %s ours %d perf %d" % (k, ours.get(k, 0), v))
        proc = k.split(';')[0] + ';'
        for j in sorted(set(ours) | set(perf)):
            if j.startswith(proc):
                print("    %s: ours %d perf %d" % (j, ours.get(j, 0), perf.get(j, 0)))
mine = sum(v for k, v in ours.items() if ';_dl_start;' in k + ';')
print("startup: perf %d samples through _dl_start, ours %d; %d of perf's not found"
      % (total, mine, short))
# an inlined function of _dl_start without _dl_start above it
orphans = sum(v for k, v in ours.items() if ';_start;_dl_start_final' in k)
if orphans:
    print("FAIL startup: %d samples name _dl_start_final without _dl_start" % orphans)
sys.exit(1 if short or orphans else 0)
PY
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail=1
exit $fail
