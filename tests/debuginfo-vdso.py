#!/usr/bin/env python3
"""The [vdso] image of a recording made elsewhere: perf record saves it in
the client's build-id cache ($HOME/.debug/.build-id/XX/REST/vdso);
`perfhub upload` sends it with the other debuginfo and the server, whose
own cache is empty, names the vdso frames as perf script does on the client
(`__vdso_clock_gettime`). With --no-debuginfo they stay `[[vdso]]`.
Skips (77) without perf record."""
import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import perfhubd_harness as H  # noqa: E402
from debuginfo_common import check, failures  # noqa: E402


def perfhub(args, home, d):
    exe = os.path.join(H.builddir(), "cli", "perfhub")
    env = dict(os.environ, HOME=home, PERFHUB_SERVER=d.url)
    return subprocess.run([exe] + args, capture_output=True, text=True, env=env, timeout=300)


def vdso_weight(folded):
    named = unnamed = 0
    for line in folded.splitlines():
        stack, _, count = line.rpartition(" ")
        if "__vdso_" in stack:
            named += int(count)
        elif stack.endswith("[[vdso]]"):
            unnamed += int(count)
    return named, unnamed


def main():
    prog = os.path.join(H.builddir(), "tests", "progs", "vdsoloop")
    if not H.have_perf_record() or not os.access(prog, os.X_OK):
        print("SKIP: perf record or tests/progs/vdsoloop unavailable")
        return H.SKIP
    work = H.tmpdir("debuginfo-vdso-")
    client_home = os.path.join(work, "client")
    server_home = os.path.join(work, "server")
    os.makedirs(client_home)
    os.makedirs(server_home)
    data = os.path.join(work, "p.data")
    subprocess.run(["perf", "record", "-q", "-g", "-o", data, "--", prog, "0.3"], check=True,
                   env=dict(os.environ, HOME=client_home), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=120)
    cache = os.path.join(client_home, ".debug", ".build-id")
    if not glob.glob(os.path.join(cache, "*", "*", "vdso")):
        print("SKIP: perf record saved no vdso image in its build-id cache")
        return H.SKIP
    expected = subprocess.run(["perf", "script", "-i", data], capture_output=True,
                              env=dict(os.environ, HOME=client_home)).stdout
    fold = os.path.join(os.path.dirname(os.path.abspath(__file__)), "symbols",
                        "stackcollapse.py")
    perf_folded = subprocess.run([sys.executable, fold, "fold"], input=expected,
                                 capture_output=True).stdout.decode()
    perf_named, _ = vdso_weight(perf_folded)
    copy = os.path.join(work, "copy.data")
    shutil.copyfile(data, copy)
    with open(copy, "ab") as f:	# distinct bytes, ignored after the sections
        f.write(b"perfhub-copy\0")

    os.environ["HOME"] = server_home
    with H.Daemon() as d:
        # first without the image (checked before it is sent: once it is,
        # profiles naming its build-id are re-symbolized)
        r = perfhub(["upload", "--wait", "--no-debuginfo", copy], client_home, d)
        check(r.returncode == 0, "upload --no-debuginfo: %d %s" % (r.returncode, r.stderr))
        pid_plain = int(r.stdout.split()[0]) if r.stdout.split() else None
        _, _, body = d.request("GET", "/api/v1/profiles/%s/collapsed?weight=period" % pid_plain)
        named_plain, unnamed_plain = vdso_weight(body.decode())
        check(named_plain == 0 and unnamed_plain > 0,
              "--no-debuginfo: vdso frames named (%d) or absent (%d)" % (named_plain,
                                                                         unnamed_plain))
        r = perfhub(["upload", "--wait", data], client_home, d)
        check(r.returncode == 0, "upload: %d %s" % (r.returncode, r.stderr))
        pid = int(r.stdout.split()[0]) if r.stdout.split() else None
        _, _, body = d.request("GET", "/api/v1/profiles/%s/collapsed?weight=period" % pid)
        named, unnamed = vdso_weight(body.decode())
        check(perf_named > 0, "perf script names no vdso frame (weight 0)")
        check(named == perf_named,
              "vdso frames named by the server: weight %d, perf script %d" % (named, perf_named))
    if not failures:
        print("ok: vdso frames named on the server: weight %d as perf script (%d unnamed "
              "inside the vdso, as perf); %d unnamed without the image" %
              (named, unnamed, unnamed_plain))
    shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
