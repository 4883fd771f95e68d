/* sha256.h - SHA-256, incremental (uploads are hashed as they stream);
 * nettle does the work (with the CPU's SHA instructions where present). */
#ifndef PERFHUB_DAEMON_SHA256_H
#define PERFHUB_DAEMON_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct ph_sha256_ctx {
	uint64_t space[20];	/* the library's context (checked in sha256.c) */
} sha256_ctx;

void sha256_init(sha256_ctx *c);
void sha256_update(sha256_ctx *c, const void *data, size_t len);
/* OUT: hex, 64 characters and a NUL. */
void sha256_final_hex(sha256_ctx *c, char hex[65]);

#endif
