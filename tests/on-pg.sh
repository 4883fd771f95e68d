#!/bin/sh
# tests/on-pg.sh STUB - runs the test that STUB names (tests/on-pg/NAME.pg
# holds "tests/NAME.py") with every daemon it starts on PostgreSQL: the
# harness (tests/perfhubd_harness.py) then starts the test's own server and
# gives each state directory a database. The exit status is the test's.
test=$(cat "$1") || exit 99
PERFHUB_TEST_BACKEND=postgresql
export PERFHUB_TEST_BACKEND
exec python3 "${top_srcdir:-.}/$test"
