# tests/service.mk: tests of the systemd units and of perfhubd run as a
# service (readiness, SIGTERM, the example config; skipped until
# daemon/perfhubd is built), including socket activation (LISTEN_FDS).
TESTS += tests/service-units.sh tests/service-daemon.py tests/service-activation.py
EXTRA_DIST += tests/service-units.sh tests/service-daemon.py tests/service-activation.py
