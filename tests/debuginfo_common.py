"""debuginfo_common - a program built and recorded now, for the debuginfo
tests: compile it, `perf record -g` it (no build-id cache, a private HOME so
nothing can be found later by accident), fold `perf script` output with the
stackcollapse-perf rules while the binary is in place, then move it away."""
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfhubd_harness import SKIP, elf_build_id, have_perf_record, tmpdir  # noqa: E402

PROG = r"""
#include <stdlib.h>
#include <time.h>
volatile unsigned long sink;
__attribute__((noinline)) void dbg_leaf(unsigned long n)
{ for (unsigned long i = 0; i < n; i++) sink += i ^ (sink >> 3); }
__attribute__((noinline)) void dbg_middle(unsigned long n) { dbg_leaf(n); }
__attribute__((noinline)) void dbg_outer_a(unsigned long n) { dbg_middle(n); }
__attribute__((noinline)) void dbg_deep(int d, unsigned long n)
{ if (d > 0) dbg_deep(d - 1, n); else dbg_leaf(n); sink++; }
__attribute__((noinline)) void dbg_outer_b(unsigned long n) { dbg_deep(4, n); }
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		dbg_outer_a(20000);
		dbg_outer_b(30000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return VARIANT;
}
"""

HERE = os.path.dirname(os.path.abspath(__file__))
FOLD = os.path.join(HERE, "symbols", "stackcollapse.py")


def build(path, variant=0, extra=()):
    src = path + ".c"
    with open(src, "w") as f:
        f.write(PROG)
    subprocess.run(["cc", "-O1", "-g", "-fno-omit-frame-pointer", "-fno-inline",
                    "-Wl,--build-id=sha1", "-DVARIANT=%d" % variant, "-o", path, src] +
                   list(extra), check=True)
    return path


build_id = elf_build_id


class Recording:
    """work/bin/NAME recorded into work/p.data; expected = folded perf script."""

    def __init__(self, name="dbgprog", secs="0.6", buildid_cache=False, record_args=()):
        if not have_perf_record() or not shutil.which("cc"):
            print("perf record or a C compiler is unavailable here")
            sys.exit(SKIP)
        self.work = tmpdir("debuginfo-")
        self.home = os.path.join(self.work, "home")
        os.makedirs(self.home)
        self.bindir = os.path.join(self.work, "bin")
        os.makedirs(self.bindir)
        self.binary = build(os.path.join(self.bindir, name))
        self.name = name
        self.build_id = build_id(self.binary)
        self.data = os.path.join(self.work, "p.data")
        env = dict(os.environ, HOME=self.home)
        cache = [] if buildid_cache else ["--no-buildid-cache"]
        subprocess.run(["perf", "record", "-q"] + cache + list(record_args) + ["-g", "-o", self.data,
                        "--", self.binary, secs], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        script = subprocess.run(["perf", "script", "-i", self.data], capture_output=True,
                                env=env, timeout=120).stdout
        self.expected = os.path.join(self.work, "expected.folded")
        with open(self.expected, "wb") as f:
            f.write(subprocess.run([sys.executable, FOLD, "fold"], input=script,
                                   capture_output=True, check=True).stdout)
        with open(self.expected) as f:
            text = f.read()
        if "dbg_leaf" not in text:
            raise AssertionError("perf script did not name the program's frames:\n" +
                                 text[:2000])
        # the server must not find it: away with the binary and its source
        self.moved = os.path.join(self.work, "moved")
        os.rename(self.bindir, self.moved)
        self.binary = os.path.join(self.moved, name)

    def daemon_env(self):
        """HOME for perfhubd: an empty one (no ~/.debug with the binary)."""
        return self.home

    def agreement(self, folded_text, label, minimum=99.0):
        ours = os.path.join(self.work, label + ".ours")
        with open(ours, "w") as f:
            f.write(folded_text)
        r = subprocess.run([sys.executable, FOLD, "compare", ours, self.expected, "--min",
                            str(minimum), "--label", label], capture_output=True, text=True)
        sys.stdout.write(r.stdout + r.stderr)
        return r.returncode == 0

    def check_named(self, d, pid, what, p=None):
        """The profile pid's stacks on daemon d name every frame of the
        program and agree with perf script (what: the case, for the
        messages); p: its JSON, when just fetched. Returns the stacks."""
        if p is None:
            st, p = d.json("GET", "/api/v1/profiles/%d" % pid)
        text = collapsed(d, pid)
        print("%s: symbolized_pct=%.1f" % (what, p["symbolized_pct"]))
        bracket = "[%s]" % self.name
        check(bracket not in text, "%s: %s frames remain" % (what, bracket))
        check(self.agreement(text, what.replace(" ", "-")), "%s: stacks vs perf script" % what)
        return text

    def cleanup(self):
        shutil.rmtree(self.work, ignore_errors=True)


# ---- checks shared by the debuginfo tests --------------------------------

failures = []


def check(cond, what):
    """Record (and print) a failure unless cond; the test goes on."""
    if not cond:
        failures.append(what)
        print("FAIL " + what)
    return bool(cond)


def finish(*recordings):
    """The exit status: 1 after any failure (the recordings' files stay for
    a look), else 0 with them removed."""
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    for rec in recordings:
        if rec is not None:
            rec.cleanup()
    return 0


def collapsed(d, pid):
    """The profile's folded stacks from the daemon d."""
    st, _, body = d.request("GET", "/api/v1/profiles/%d/collapsed" % pid)
    check(st == 200, "collapsed %d: %d" % (pid, st))
    return body.decode()


def wait_resymbolized(d, pid, before_pct, timeout=120):
    """The profile goes back to the queue and comes back ready with more
    samples symbolized; returns its JSON."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        st, p = d.json("GET", "/api/v1/profiles/%d" % pid)
        if p["status"] == "ready" and p["symbolized_pct"] > before_pct:
            return p
        if p["status"] == "failed":
            raise AssertionError("re-symbolization failed: %r" % p)
        time.sleep(0.1)
    raise AssertionError("profile %d not re-symbolized after %ds" % (pid, timeout))


def resymbolize(d, pid, headers=None):
    """POST .../resymbolize (202: the profile is queued before the answer)
    and wait for the parse; returns the profile's JSON."""
    st, r = d.json("POST", "/api/v1/profiles/%d/resymbolize" % pid, b"", headers)
    check(st == 202, "resymbolize %d: %d %r" % (pid, st, r))
    return d.wait(pid)
