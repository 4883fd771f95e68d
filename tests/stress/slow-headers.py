#!/usr/bin/env python3
"""Slow headers: 260 connections from another address (127.0.0.2) each send
one byte of a request's headers every 6 s, reconnecting when cut, while a
client on 127.0.0.1 asks /healthz five times a second. /healthz must stay
fast (every answer 200, p99 under 0.5 s), the attacker's address may hold
at most --max-connections-per-ip connections, and each of them is cut
within --header-timeout (plus the watchdog's tick) of its start.

Bounded: 260 connections for 24 s (STRESS_SIZE=full: 90 s)."""
import os
import select
import socket
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stress_lib as S  # noqa: E402
from perfhubd_harness import SKIP, Daemon, check  # noqa: E402

ATTACKERS = 260
BYTE_EVERY = 6.0          # seconds between two header bytes of one connection
HEADER_TIMEOUT = 10       # the daemon's default --header-timeout
PER_IP = 128              # the daemon's default --max-connections-per-ip
ATTACKER_ADDR = "127.0.0.2"
REQUEST = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + b"a" * 4096


class Slow:
    """One attacking connection: connects from ATTACKER_ADDR and trickles."""

    def __init__(self, port):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.s.bind((ATTACKER_ADDR, 0))
        self.s.setblocking(False)
        self.start = time.time()
        self.sent = 0
        self.next = self.start
        try:
            self.s.connect((("127.0.0.1", port)))
        except BlockingIOError:
            pass

    def fileno(self):
        return self.s.fileno()

    def trickle(self, now):
        """Sends the next byte when due; False once the server closed it."""
        if now < self.next:
            return True
        self.next = now + BYTE_EVERY
        try:
            self.s.send(REQUEST[self.sent:self.sent + 1])
            self.sent += 1
        except BlockingIOError:
            pass
        except OSError:
            return False
        return True

    def closed_by_server(self):
        try:
            return self.s.recv(4096) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True


def healthz(url):
    t0 = time.time()
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=10) as r:
            r.read()
            st = r.status
    except OSError:
        st = None
    return st, time.time() - t0


def main():
    duration = S.size_arg("duration", 24, 90)
    probe = socket.socket()
    try:
        probe.bind((ATTACKER_ADDR, 0))
    except OSError as e:
        print("cannot bind %s (%s): no second loopback address here" % (ATTACKER_ADDR, e))
        return SKIP
    finally:
        probe.close()
    with Daemon() as d:
        conns = []
        lifetimes = []          # seconds from connect to the server's close
        refused = 0             # closed before a second byte could go
        peak_open = 0
        lat = []
        bad = []
        t_end = time.time() + duration
        next_probe = time.time()
        redial = []             # when a closed slot dials again: one byte period later
        while time.time() < t_end:
            now = time.time()
            redial = [t for t in redial if t > now]
            while len(conns) + len(redial) < ATTACKERS:
                conns.append(Slow(d.port))
            for c in list(conns):
                if not c.trickle(now):
                    conns.remove(c)
                    c.s.close()
                    redial.append(now + BYTE_EVERY)
            r, _, _ = select.select(conns, [], [], 0.05)
            for c in r:
                if c.closed_by_server():
                    life = time.time() - c.start
                    if c.sent <= 1 and life < 1.0:
                        refused += 1
                    else:
                        lifetimes.append(life)
                    conns.remove(c)
                    c.s.close()
                    redial.append(time.time() + BYTE_EVERY)
            # held: open for over a second (a refused one is closed at once)
            peak_open = max(peak_open, sum(1 for c in conns if now - c.start > 1.0))
            if time.time() >= next_probe:
                next_probe += 0.2
                st, t = healthz(d.url)
                lat.append(t)
                if st != 200:
                    bad.append(st)
        for c in conns:
            c.s.close()
        check(d.proc.poll() is None, "daemon died under the attack")
        st, _, body = d.request("GET", "/metrics")
        cut = [float(l.split()[1]) for l in body.decode().splitlines()
               if l.startswith("perfhub_http_header_timeouts_total ")]
        check(st == 200 and cut and cut[0] >= len(lifetimes) / 2,
              "/metrics counts %s header timeouts, the attacker saw %d cuts" %
              (cut, len(lifetimes)))
    p50, p99 = S.percentile(lat, 50), S.percentile(lat, 99)
    S.table("slow headers: %d connections from %s, a byte every %.0f s, %d s" %
            (ATTACKERS, ATTACKER_ADDR, BYTE_EVERY, duration), [
        ("/healthz answers", "%d, %d not 200" % (len(lat), len(bad))),
        ("/healthz latency", "p50 %.1f ms, p99 %.1f ms, max %.1f ms" %
         (p50 * 1e3, p99 * 1e3, max(lat) * 1e3)),
        ("attacker connections held at once", "%d (limit %d per address)" % (peak_open, PER_IP)),
        ("attacker connections refused", "%d" % refused),
        ("cut after", "%d connections, longest %.1f s (header-timeout %d s)" %
         (len(lifetimes), max(lifetimes or [0]), HEADER_TIMEOUT)),
    ])
    check(not bad, "/healthz failed %d times under the attack: %s" % (len(bad), bad[:5]))
    check(p99 < 0.5, "/healthz p99 %.2f s under the attack" % p99)
    check(peak_open <= PER_IP, "%d attacker connections held (limit %d)" % (peak_open, PER_IP))
    check(lifetimes and max(lifetimes) < HEADER_TIMEOUT + 2,
          "slow connections lived %.1f s (deadline %d s)" % (max(lifetimes or [0]),
                                                             HEADER_TIMEOUT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
