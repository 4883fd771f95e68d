# tests/service.mk: tests of the systemd units and of perfhubd run as a
# service (readiness, SIGTERM, the example config; skipped until
# daemon/perfhubd is built). Socket activation is an expected failure
# until perfhubd takes its socket from LISTEN_FDS: then it passes
# unexpectedly and must leave XFAIL_TESTS.
TESTS += tests/service-units.sh tests/service-daemon.py tests/service-activation.py
XFAIL_TESTS += tests/service-activation.py
EXTRA_DIST += tests/service-units.sh tests/service-daemon.py tests/service-activation.py
