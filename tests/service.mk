# tests/service.mk: tests of the systemd units and of perfhubd run as a
# service (readiness, SIGTERM, socket activation; skipped until
# daemon/perfhubd is built).
TESTS += tests/service-units.sh tests/service-daemon.py
EXTRA_DIST += tests/service-units.sh tests/service-daemon.py
