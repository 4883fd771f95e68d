# tests/client.mk: the perfhub client against a test server (Python 3
# standard library over tests/perfhubd_harness.py): perfhub record, upload
# (file, directory, live pipe), show, ls, tokens and CI labels; the
# server's side of streamed uploads.
EXTRA_DIST += tests/client_common.py
CLIENT_TESTS = \
	tests/client-record.py \
	tests/client-upload.py \
	tests/client-token.py \
	tests/client-stream.py
TESTS += $(CLIENT_TESTS)
EXTRA_DIST += $(CLIENT_TESTS)
dist_doc_DATA += docs/client.md
