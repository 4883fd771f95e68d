# web/local.mk: the flame-graph page, installed under $(pkgdatadir)/web
# (perfhubd serves it from there). Static files only, no build step.
webdir = $(pkgdatadir)/web
dist_web_DATA = web/index.html web/style.css web/flame.js web/app.js
