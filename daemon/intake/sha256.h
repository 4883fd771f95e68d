/* sha256.h - SHA-256, incremental (uploads are hashed as they stream);
 * OpenSSL's libcrypto does the work, with the code for the CPU at hand
 * (SHA instructions where present, else AVX2). */
#ifndef PERFHUB_DAEMON_SHA256_H
#define PERFHUB_DAEMON_SHA256_H

#include <stddef.h>

typedef struct ph_sha256_ctx {
	void *md;		/* the library's context; NULL once done */
} sha256_ctx;

/* 0, or -1 out of memory. */
int sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t len);
/* OUT: hex, 64 characters and a NUL (empty if the library failed); the
 * context is freed. */
void sha256_final_hex(sha256_ctx *c, char hex[65]);
/* Frees a context that never reached sha256_final_hex (no-op after it). */
void sha256_free(sha256_ctx *c);

#endif
