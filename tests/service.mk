# tests/service.mk: tests of the systemd units and the service setup.
TESTS += tests/service-units.sh
EXTRA_DIST += tests/service-units.sh
