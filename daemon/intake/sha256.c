/* sha256.c - SHA-256 through libcrypto's EVP interface. Where the CPU has
 * no SHA instructions its AVX2 code hashed 300-350 MB/s here, nettle's
 * 220: for a 200 MB upload, most of the wait before the parse. A large
 * stream is hashed beside the thread that receives it (sha256.h). */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "intake/sha256.h"

struct sha256_bg {
	pthread_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cv;
	EVP_MD_CTX *md;
	unsigned char *buf[SHA256_BG_SLOTS];
	size_t len[SHA256_BG_SLOTS];
	uint64_t head, tail;	/* slots handed over, slots hashed */
	size_t fill;		/* bytes in slot head % SLOTS, being filled */
	int done;		/* no more slots come */
};

static atomic_int bg_running;	/* threads started, of SHA256_BG_MAX */

int sha256_init(sha256_ctx *c)
{
	EVP_MD_CTX *m = EVP_MD_CTX_new();

	memset(c, 0, sizeof(*c));
	if (!m)
		return -1;
	if (EVP_DigestInit_ex(m, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(m);
		return -1;
	}
	c->md = m;
	return 0;
}

static void *bg_run(void *arg)
{
	struct sha256_bg *b = arg;
	size_t slot, len;

	pthread_mutex_lock(&b->lock);
	for (;;) {
		while (b->tail == b->head && !b->done)
			pthread_cond_wait(&b->cv, &b->lock);
		if (b->tail == b->head)
			break;
		slot = (size_t)(b->tail % SHA256_BG_SLOTS);
		len = b->len[slot];
		pthread_mutex_unlock(&b->lock);
		EVP_DigestUpdate(b->md, b->buf[slot], len);
		pthread_mutex_lock(&b->lock);
		b->tail++;
		pthread_cond_broadcast(&b->cv);
	}
	pthread_mutex_unlock(&b->lock);
	return NULL;
}

static void bg_free(struct sha256_bg *b)
{
	int i;

	for (i = 0; i < SHA256_BG_SLOTS; i++)
		free(b->buf[i]);
	pthread_mutex_destroy(&b->lock);
	pthread_cond_destroy(&b->cv);
	free(b);
	atomic_fetch_sub(&bg_running, 1);
}

/* The thread, hashing on into the same context; NULL (hashed here then)
 * when it cannot be had or SHA256_BG_MAX run already. */
static struct sha256_bg *bg_start(EVP_MD_CTX *md)
{
	struct sha256_bg *b;
	int i;

	if (atomic_fetch_add(&bg_running, 1) >= SHA256_BG_MAX) {
		atomic_fetch_sub(&bg_running, 1);
		return NULL;
	}
	if (!(b = calloc(1, sizeof(*b)))) {
		atomic_fetch_sub(&bg_running, 1);
		return NULL;
	}
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cv, NULL);
	b->md = md;
	for (i = 0; i < SHA256_BG_SLOTS; i++)
		if (!(b->buf[i] = malloc(SHA256_BG_SLOT)))
			goto fail;
	if (pthread_create(&b->tid, NULL, bg_run, b) == 0)
		return b;
fail:
	bg_free(b);
	return NULL;
}

/* The slot being filled goes to the thread; waits for a free one. */
static void bg_hand(struct sha256_bg *b)
{
	pthread_mutex_lock(&b->lock);
	b->len[b->head % SHA256_BG_SLOTS] = b->fill;
	b->head++;
	b->fill = 0;
	pthread_cond_broadcast(&b->cv);
	while (b->head - b->tail >= SHA256_BG_SLOTS)
		pthread_cond_wait(&b->cv, &b->lock);
	pthread_mutex_unlock(&b->lock);
}

/* Everything handed over hashed, and the thread gone. */
static void bg_stop(sha256_ctx *c)
{
	struct sha256_bg *b = c->bg;

	if (!b)
		return;
	if (b->fill)
		bg_hand(b);
	pthread_mutex_lock(&b->lock);
	b->done = 1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->lock);
	pthread_join(b->tid, NULL);
	bg_free(b);
	c->bg = NULL;
}

void sha256_update(sha256_ctx *c, const void *data, size_t len)
{
	const unsigned char *p = data;
	struct sha256_bg *b;
	size_t n;

	if (!c->md || !len)
		return;
	if (!c->bg_tried && c->inline_bytes >= SHA256_BG_AFTER) {
		c->bg_tried = 1;
		c->bg = bg_start(c->md);
	}
	if (!(b = c->bg)) {
		EVP_DigestUpdate(c->md, data, len);
		c->inline_bytes += len;
		return;
	}
	/* the slot at head is free: bg_hand waited for that */
	while (len) {
		n = SHA256_BG_SLOT - b->fill < len ? SHA256_BG_SLOT - b->fill : len;
		memcpy(b->buf[b->head % SHA256_BG_SLOTS] + b->fill, p, n);
		b->fill += n;
		p += n;
		len -= n;
		if (b->fill == SHA256_BG_SLOT)
			bg_hand(b);
	}
}

void sha256_final_hex(sha256_ctx *c, char hex[65])
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	hex[0] = 0;
	bg_stop(c);
	if (c->md && EVP_DigestFinal_ex(c->md, d, &n) == 1 && n == 32)
		for (i = 0; i < n; i++)
			snprintf(hex + 2 * i, 3, "%02x", d[i]);
	sha256_free(c);
}

void sha256_free(sha256_ctx *c)
{
	bg_stop(c);
	EVP_MD_CTX_free(c->md);
	c->md = NULL;
}
