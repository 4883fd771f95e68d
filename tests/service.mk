# tests/service.mk: tests of the systemd units and of perfhubd run as a
# service (readiness, SIGTERM, the example config; skipped until
# daemon/perfhubd is built), including socket activation (LISTEN_FDS),
# retention, shutdown under load, --backup and --vacuum, configuration
# errors and logging, and man pages that agree with --help.
SERVICE_TESTS = tests/service-units.sh tests/service-daemon.py tests/service-activation.py \
	tests/service-retention.py tests/service-shutdown.py tests/service-config.py \
	tests/service-man.py tests/service-defaults.py tests/service-watch.py
TESTS += $(SERVICE_TESTS)
EXTRA_DIST += $(SERVICE_TESTS)

# The README's test command tests everything; .ci/run runs exactly it.
TESTS += tests/readme-commands.sh
EXTRA_DIST += tests/readme-commands.sh
