#!/usr/bin/env python3
"""stackcollapse.py - folds `perf script` output with the rules of
FlameGraph's stackcollapse-perf.pl (default options), written here from its
documented behaviour so tests can compare perfhub collapse with perf's own
view of a recording. Also compares two folded outputs.

  stackcollapse.py fold [--pid] [--tid] [--kernel] [--event NAME] < script.txt
  stackcollapse.py compare OURS THEIRS [--min PCT] [--label TEXT] [--user-of PROG]
"""
import re
import sys

HEADER = re.compile(r'^(\S.+?)\s+(\d+)/*(\d+)*\s+')
PERIOD_EVENT = re.compile(r':\s*(\d+)*\s+(\S+):\s*$')
FRAME = re.compile(r'^\s*(\w+)\s*(.+) \((\S*)\)')
OFFSET = re.compile(r'\+0x[\da-f]+$')
GO_METHOD = re.compile(r'\.\(.*\)\.')
ARGS = re.compile(r'\((?!anonymous namespace\)).*')


def tidy(func):
    func = func.replace(';', ':')
    if not GO_METHOD.search(func):
        func = ARGS.sub('', func, count=1)
    return func.replace('"', '').replace("'", '')


def fold(lines, include_pid=False, include_tid=False, kernel=False, event_filter=None):
    out = {}
    stack = []
    pname = None
    period = 1
    skip = False
    chosen = event_filter

    def remember():
        if skip:
            return
        key = ';'.join([pname if pname is not None else ''] + stack)
        out[key] = out.get(key, 0) + period

    in_sample = False
    for line in lines:
        line = line.rstrip('\n')
        if line == '':
            if in_sample:
                remember()
            stack = []
            in_sample = False
            continue
        m = HEADER.match(line)
        if m and not line[0].isspace():
            comm, pid, tid = m.group(1), m.group(2), m.group(3)
            if not tid:
                tid, pid = pid, '?'
            period = 1
            skip = False
            pe = PERIOD_EVENT.search(line)
            if pe:
                if pe.group(1) and int(pe.group(1)):
                    period = int(pe.group(1))
                ev = pe.group(2)
                if chosen is None:
                    chosen = ev
                elif ev != chosen and not (event_filter and ev.split(':')[0] == event_filter):
                    skip = True
            if include_tid:
                pname = '%s-%s/%s' % (comm, pid, tid)
            elif include_pid:
                pname = '%s-%s' % (comm, pid)
            else:
                pname = comm
            pname = pname.replace(' ', '_')
            stack = []
            in_sample = True
            continue
        m = FRAME.match(line)
        if m and in_sample:
            rawfunc, mod = m.group(2), m.group(3)
            rawfunc = OFFSET.sub('', rawfunc)
            if rawfunc.startswith('('):
                continue
            if rawfunc == '[unknown]':
                if mod != '[unknown]':
                    rawfunc = '[%s]' % re.sub(r'.*/', '', mod)
                else:
                    rawfunc = '[unknown]'
            func = tidy(rawfunc)
            if kernel and re.search(r'(^\[|vmlinux$)', mod) and 'unknown' not in mod:
                func += '_[k]'
            stack.insert(0, func)
    if in_sample:
        remember()
    return out


def load(path):
    d = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if not line:
                continue
            k, _, v = line.rpartition(' ')
            d[k] = d.get(k, 0) + int(v)
    return d


def agreement(a, b):
    common = sum(min(a[k], b.get(k, 0)) for k in a)
    return 100.0 * common / max(sum(a.values()), sum(b.values()), 1)


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    if args[0] == 'fold':
        ev = None
        if '--event' in args:
            ev = args[args.index('--event') + 1]
        out = fold(sys.stdin, '--pid' in args, '--tid' in args, '--kernel' in args, ev)
        for k in sorted(out, key=lambda s: s.encode()):
            print('%s %d' % (k, out[k]))
        return 0
    if args[0] == 'compare':
        ours, theirs = load(args[1]), load(args[2])
        minimum = float(args[args.index('--min') + 1]) if '--min' in args else 99.0
        label = args[args.index('--label') + 1] if '--label' in args else args[1]
        pct = agreement(ours, theirs)
        print('agreement %-28s %7.3f%% (ours %d, perf %d, stacks %d/%d)' % (
            label, pct, sum(ours.values()), sum(theirs.values()), len(ours), len(theirs)))
        # exact match required for the named program's own frames: both
        # sides projected onto those frames (other frames dropped)
        bad = 0
        if '--user-of' in args:
            names = args[args.index('--user-of') + 1].split(',')

            def project(d):
                p = {}
                for k, v in d.items():
                    parts = k.split(';')
                    kept = [f for f in parts[1:] if any(f == n or f.startswith(n + '<') or f.startswith(n + '::<')
                                                         for n in names)]
                    key = ';'.join([parts[0]] + kept)
                    p[key] = p.get(key, 0) + v
                return p
            po, pt = project(ours), project(theirs)
            for k in sorted(set(po) | set(pt)):
                if po.get(k, 0) != pt.get(k, 0):
                    print('  user frames differ: %s ours %d perf %d' % (k, po.get(k, 0), pt.get(k, 0)))
                    bad += 1
        if pct < minimum or bad:
            diffs = sorted(set(ours) | set(theirs), key=lambda k: -abs(ours.get(k, 0) - theirs.get(k, 0)))
            for k in diffs[:15]:
                if ours.get(k, 0) != theirs.get(k, 0):
                    print('  ours %10d perf %10d  %s' % (ours.get(k, 0), theirs.get(k, 0), k))
            return 1
        return 0
    print(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main())
