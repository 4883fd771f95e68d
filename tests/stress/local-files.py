#!/usr/bin/env python3
"""The local-file probe: uploads that try to make perfhubd read its own
files. Recordings made here name

  - a binary by path with no build-id (linked with --build-id=none),
  - a JIT region (anonymous executable memory) whose /tmp/perf-PID.map
    names a function,
  - this machine's kernel release, with kernel samples,

each with a function name found only in that file. Uploaded over HTTP, none
of those names may come back in /collapsed, nor the binary's instructions
in /annotate: a file of the server serves an upload only when its build-id
equals the recorded one. The same bytes from
a watched directory, or uploaded to a daemon started with --local-uploads,
are symbolized as perf would, names and all (the probe would find nothing
to find otherwise). A binary whose build-id the recording names is named for
an upload too (perf's rule)."""
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from perfhubd_harness import SKIP, Daemon, check, have_perf_record, tmpdir  # noqa: E402

PROG = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
volatile unsigned long sink;
__attribute__((noinline)) void NAME(unsigned long n)
{ for (unsigned long i = 0; i < n; i++) sink += i ^ (sink >> 3); }
int main(int argc, char **argv)
{
	int jit = argc > 1 && !strcmp(argv[1], "jit");
	if (jit) {
		/* mov ecx, 200000000; 1: dec ecx; jnz 1b; ret */
		static const unsigned char code[] = { 0xb9, 0x00, 0xc2, 0xeb, 0x0b, 0xff, 0xc9,
						      0x75, 0xfc, 0xc3 };
		unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char path[64];
		FILE *f;
		if (p == MAP_FAILED)
			return 1;
		memcpy(p, code, sizeof(code));
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		f = fopen(path, "w");
		if (!f)
			return 1;
		fprintf(f, "%lx %zx JITNAME\n", (unsigned long)(uintptr_t)p, sizeof(code));
		fclose(f);
		for (int i = 0; i < 3; i++)
			((void (*)(void))p)();
		return 0;
	}
	NAME(60000000);
	return 0;
}
"""

SECRET = "probe_secret_in_binary"
JIT_SECRET = "probe_secret_jit_function"


def build(path, build_id):
    src = path + ".c"
    with open(src, "w") as f:
        f.write(PROG.replace("JITNAME", JIT_SECRET).replace("NAME", SECRET))
    subprocess.run(["cc", "-O1", "-fno-omit-frame-pointer", "-Wl,--build-id=" + build_id,
                    "-o", path, src], check=True)
    return path


def record(out, args, cmd):
    subprocess.run(["perf", "record", "-q", "-o", out] + args + ["--"] + cmd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    return out


def annotated(d, pid):
    """Instruction texts /annotate gives for the profile's hottest function."""
    st, _, body = d.request("GET", "/api/v1/profiles/%d/top" % pid)
    check(st == 200, "top: %s" % st)
    fn = json.loads(body)["functions"][0]["name"]
    st, _, body = d.request("GET", "/api/v1/profiles/%d/annotate?function=%s" %
                            (pid, urllib.parse.quote(fn)))
    check(st == 200, "annotate %s: %s %r" % (fn, st, body[:200]))
    return [i["text"] for i in json.loads(body)["instructions"] if i.get("text")]


def collapsed(d, data=None, pid=None):
    if pid is None:
        st, r = d.upload(open(data, "rb").read())
        check(st in (200, 202), "upload: %s %s" % (st, r))
        pid = r["id"]
    p = d.wait(pid)
    check(p["status"] == "ready", "profile %d: %s %s" % (pid, p["status"], p.get("error")))
    st, _, body = d.request("GET", "/api/v1/profiles/%d/collapsed?kernel=1" % pid)
    check(st == 200, "collapsed: %s" % st)
    out = Collapsed(body.decode())
    out.pid = pid
    st, fg = d.json("GET", "/api/v1/profiles/%d/flamegraph?kernel=1" % pid)
    check(st == 200, "flamegraph: %s" % st)
    out.kernel = set()
    kernel_frames(fg, out.kernel)
    return out


class Collapsed(str):
    """A profile's folded stacks; .kernel: the names of its kernel frames,
    .pid: the profile's id."""


def kernel_frames(node, names):
    """Names of kernel frames (marked _[k]) other than the DSO's. [vdso] is
    marked so too, but it is an image in user space that perf record saves
    in its build-id cache: named by build-id, as perf's rule allows."""
    name = node.get("name", "")
    if name.endswith("_[k]") and not name.startswith("[") and node.get("dso") != "[vdso]":
        names.add(name[:-4])
    for c in node.get("children", []):
        kernel_frames(c, names)


def kernel_names(profile):
    return profile.kernel


def remove_jit_maps():
    """The JIT maps the probe's program wrote in /tmp (perf's place)."""
    for f in os.listdir("/tmp"):
        if f.startswith("perf-") and f.endswith(".map"):
            try:
                with open(os.path.join("/tmp", f)) as m:
                    if JIT_SECRET in m.read():
                        os.unlink(os.path.join("/tmp", f))
            except OSError:
                pass


def main():
    try:
        return probe()
    finally:
        remove_jit_maps()


def probe():
    if not have_perf_record() or not shutil.which("cc"):
        print("perf record or a C compiler is unavailable here")
        return SKIP
    work = tmpdir("localfiles-")
    nobid = build(os.path.join(work, "nobid"), "none")
    withbid = build(os.path.join(work, "withbid"), "sha1")
    recs = {"binary": record(os.path.join(work, "binary.data"), ["-e", "cpu-clock"], [nobid]),
            "kernel": record(os.path.join(work, "kernel.data"), ["-e", "cpu-clock", "-g"],
                             ["dd", "if=/dev/zero", "of=/dev/null", "bs=4k", "count=400000"]),
            "build-id": record(os.path.join(work, "bid.data"), ["-e", "cpu-clock"], [withbid])}
    jit = platform.machine() == "x86_64"
    if jit:
        recs["jit"] = record(os.path.join(work, "jit.data"), ["-e", "cpu-clock"], [nobid, "jit"])
    else:
        print("not x86_64: the JIT part is not probed")
    found = {}
    with Daemon() as d:
        for what, data in recs.items():
            found[what] = collapsed(d, data)
        # by its id: the recording of the binary with a build-id can be
        # the same size, and that one's code is served
        code = annotated(d, found["binary"].pid)
    with Daemon(args=["--local-uploads"]) as d:
        local = {what: collapsed(d, data) for what, data in recs.items()}
        local_code = annotated(d, local["binary"].pid)
    watch = os.path.join(work, "watch")
    os.makedirs(watch)
    with Daemon(args=["--watch", watch]) as d:
        shutil.copy(recs["binary"], os.path.join(watch, "binary.data.tmp"))
        os.rename(os.path.join(watch, "binary.data.tmp"), os.path.join(watch, "binary.data"))
        deadline = time.time() + 60
        pid = None
        while time.time() < deadline and pid is None:
            st, lst = d.json("GET", "/api/v1/profiles")
            pid = lst["profiles"][0]["id"] if st == 200 and lst["profiles"] else None
            time.sleep(0.1)
        check(pid, "the watched recording was not taken")
        watched = collapsed(d, pid=pid)

    # the probe finds something to find: local recordings name all three
    check(SECRET in local["binary"] and SECRET in watched,
          "a local recording should name the binary's function")
    kall = kernel_names(local["kernel"])
    check(kall, "a local recording should name kernel functions")
    if jit:
        check(JIT_SECRET in local["jit"], "a local recording should name the JIT function")
    # uploads do not read the server's files
    check(SECRET not in found["binary"],
          "an upload named a function of a server file without build-id")
    check(local_code and not code,
          "/annotate showed %d instructions of a server file without build-id to an upload"
          " (%d for a local recording)" % (len(code), len(local_code)))
    check(not kernel_names(found["kernel"]),
          "an upload named kernel functions from the server's kallsyms: %s" %
          sorted(kernel_names(found["kernel"]))[:5])
    if jit:
        check(JIT_SECRET not in found["jit"], "an upload read the server's /tmp/perf-PID.map")
    # ... unless the build-id matches, as perf's rule says
    check(SECRET in found["build-id"], "a binary whose build-id matches names an upload's frames")
    print("local-file probe: an upload got no name from a file without build-id, a JIT map"
          " or the running kernel (%d kernel names, %s for local recordings); matching"
          " build-ids still name frames" %
          (len(kall), "JIT named" if jit else "no JIT part"))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
