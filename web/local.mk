# web/local.mk: the flame-graph page, installed under $(pkgdatadir)/web
# (perfhubd serves it from there). Static files only, no build step.
webdir = $(pkgdatadir)/web
dist_web_DATA = web/index.html web/style.css web/flame.js web/app.js
# the API's description, served at /api/v1/openapi.json from beside the page
dist_web_DATA += docs/openapi.json
dist_doc_DATA += docs/web.md docs/api.md
BENCHES += tests/bench-web.sh
EXTRA_DIST += tests/bench-web.sh tests/bench-web.js
