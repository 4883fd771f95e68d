#!/bin/sh
# The systemd units must pass `systemd-analyze verify`, and the service's
# hardening must rate an exposure of at most 2.0 ("OK") in
# `systemd-analyze security --offline=true`. Skips (77) without systemd-analyze.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=${PERFHUB_TEST_TMP:-/tmp}/service-units
max_exposure=2.0

command -v systemd-analyze >/dev/null 2>&1 || { echo "SKIP: no systemd-analyze"; exit 77; }
rm -rf "$tmp" && mkdir -p "$tmp" || exit 1

# verify needs ExecStart to name an existing program: the built daemon
# when there is one, else a stand-in (the unit's other settings are what
# is checked here).
exe="$bld/daemon/perfhubd"
[ -x "$exe" ] || exe=/bin/true
case $exe in /*) ;; *) exe="$(cd "$(dirname "$exe")" && pwd)/$(basename "$exe")";; esac
sed -e "s|@sbindir@/perfhubd|$exe|g" -e "s|@sysconfdir@|/etc|g" \
    -e "s|@docdir@|/usr/share/doc/perfhub|g" \
    "$src/systemd/perfhubd.service.in" > "$tmp/perfhubd.service" || exit 1
cp "$src/systemd/perfhubd.socket" "$tmp/" || exit 1

fail=0
if grep -q '@[a-z]*@' "$tmp/perfhubd.service"; then
	echo "FAIL: unsubstituted placeholder in perfhubd.service"; fail=1
fi

cd "$tmp" || exit 1
out=$(systemd-analyze verify ./perfhubd.service ./perfhubd.socket 2>&1)
rc=$?
if [ $rc -ne 0 ] || [ -n "$out" ]; then
	echo "FAIL: systemd-analyze verify (rc $rc):"; echo "$out"; fail=1
else
	echo "ok: systemd-analyze verify perfhubd.service perfhubd.socket"
fi

sec=$(systemd-analyze security --offline=true ./perfhubd.service 2>&1)
score=$(printf '%s\n' "$sec" | sed -n 's/.*Overall exposure level for perfhubd.service: *\([0-9.]*\).*/\1/p')
if [ -z "$score" ]; then
	echo "FAIL: no exposure figure from systemd-analyze security:"; printf '%s\n' "$sec" | tail -5; fail=1
elif awk -v s="$score" -v m="$max_exposure" 'BEGIN { exit !(s + 0 <= m + 0) }'; then
	echo "ok: exposure $score (at most $max_exposure)"
else
	echo "FAIL: exposure $score above $max_exposure; the weak settings:"
	printf '%s\n' "$sec" | grep '^✗' ; fail=1
fi

# The unit facts the contract and the issue rely on.
for want in 'Type=notify' 'StateDirectory=perfhub' 'DynamicUser=yes' \
	    'ProtectSystem=strict' 'NoNewPrivileges=yes' 'CapabilityBoundingSet=$' \
	    'SystemCallFilter=@system-service' 'MemoryDenyWriteExecute=yes'; do
	grep -q "^$want" perfhubd.service || { echo "FAIL: perfhubd.service lacks $want"; fail=1; }
done
# The socket listens where perfhubd listens by default.
grep -q '^ListenStream=127.0.0.1:8080$' perfhubd.socket ||
	{ echo "FAIL: perfhubd.socket does not listen on the default 127.0.0.1:8080"; fail=1; }

exit $fail
