/* sha256.h - SHA-256, incremental (uploads are hashed as they stream);
 * OpenSSL's libcrypto does the work, with the code for the CPU at hand
 * (SHA instructions where present, else AVX2). Past the first
 * SHA256_BG_AFTER bytes a stream is hashed on a thread of its own, from
 * copies (SHA256_BG_SLOTS x SHA256_BG_SLOT bytes at most), so that
 * receiving and writing the rest goes on meanwhile; at most SHA256_BG_MAX
 * streams at once, the others are hashed where they are received. */
#ifndef PERFHUB_DAEMON_SHA256_H
#define PERFHUB_DAEMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_BG_AFTER	(4u << 20)
#define SHA256_BG_SLOT	(1u << 20)
#define SHA256_BG_SLOTS	4
#define SHA256_BG_MAX	4

typedef struct ph_sha256_ctx {
	void *md;		/* the library's context; NULL once done */
	struct sha256_bg *bg;	/* the hashing thread, once started */
	uint64_t inline_bytes;	/* hashed here, before it */
	int bg_tried;		/* one try at starting it */
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
