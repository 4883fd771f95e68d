# systemd/local.mk: the service and socket units and the example
# configuration. The service unit is generated so that it names the
# installed paths (sbindir, sysconfdir, docdir).
systemdunitdir = $(systemdsystemunitdir)
systemdunit_DATA = systemd/perfhubd.service
dist_systemdunit_DATA = systemd/perfhubd.socket

perfhubconfdir = $(sysconfdir)/perfhub
dist_perfhubconf_DATA = systemd/perfhubd.conf

EXTRA_DIST += systemd/perfhubd.service.in
CLEANFILES += systemd/perfhubd.service

systemd/perfhubd.service: systemd/perfhubd.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && \
	sed -e 's|@sbindir[@]|$(sbindir)|g' \
	    -e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	    -e 's|@docdir[@]|$(docdir)|g' \
	    $(srcdir)/systemd/perfhubd.service.in > $@.tmp && mv $@.tmp $@

dist_doc_DATA += docs/service.md

# distcheck installs as a user under its own prefix: keep the units there.
AM_DISTCHECK_CONFIGURE_FLAGS = --with-systemdsystemunitdir=$$dc_install_base/lib/systemd/system

# Man pages (tests/service-man.py checks them against --help).
dist_man_MANS += docs/perfhubd.8 docs/perfhub.1
