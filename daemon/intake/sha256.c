/* sha256.c - SHA-256 through nettle. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <nettle/sha2.h>
/* nettle names its functions sha256_* through macros; ours keep the names */
#undef sha256_init
#undef sha256_update
#undef sha256_digest

#include "intake/sha256.h"

_Static_assert(sizeof(struct sha256_ctx) <= sizeof(((sha256_ctx *)0)->space),
	       "sha256_ctx has no room for nettle's context");

void sha256_init(sha256_ctx *c)
{
	nettle_sha256_init((struct sha256_ctx *)c->space);
}

void sha256_update(sha256_ctx *c, const void *data, size_t len)
{
	nettle_sha256_update((struct sha256_ctx *)c->space, len, data);
}

void sha256_final_hex(sha256_ctx *c, char hex[65])
{
	uint8_t d[SHA256_DIGEST_SIZE];
	int i;

	nettle_sha256_digest((struct sha256_ctx *)c->space, sizeof(d), d);
	for (i = 0; i < SHA256_DIGEST_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}
