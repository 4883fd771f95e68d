/* sha256.h - FIPS 180-4 SHA-256, incremental (uploads are hashed as they stream). */
#ifndef PERFHUB_DAEMON_SHA256_H
#define PERFHUB_DAEMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha256_ctx {
	uint32_t h[8];
	uint64_t total;		/* bytes hashed */
	uint8_t buf[64];
	size_t fill;
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t len);
/* OUT: hex, 64 characters and a NUL. */
void sha256_final_hex(sha256_ctx *c, char hex[65]);

#endif
