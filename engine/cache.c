/* cache.c - the LRU of loaded models. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>

#include "engine/cache.h"
#include "engine/model-int.h"

struct pe_cache {
	pthread_mutex_t lock;
	pe_model *head, *tail;	/* most recently used first */
	size_t bytes, max;
};

pe_cache *pe_cache_new(size_t max_bytes)
{
	pe_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->max = max_bytes;
	return c;
}

static void unlink_model(pe_cache *c, pe_model *m)
{
	if (m->prev)
		m->prev->next = m->next;
	else
		c->head = m->next;
	if (m->next)
		m->next->prev = m->prev;
	else
		c->tail = m->prev;
	m->prev = m->next = NULL;
	c->bytes -= m->bytes;
	m->dead = 1;
}

static void push_front(pe_cache *c, pe_model *m)
{
	m->prev = NULL;
	m->next = c->head;
	if (c->head)
		c->head->prev = m;
	c->head = m;
	if (!c->tail)
		c->tail = m;
	c->bytes += m->bytes;
	m->dead = 0;
}

void pe_cache_free(pe_cache *c)
{
	if (!c)
		return;
	while (c->head) {
		pe_model *m = c->head;
		unlink_model(c, m);
		if (!m->refs)
			pe_model_free(m);
	}
	pthread_mutex_destroy(&c->lock);
	free(c);
}

pe_model *pe_cache_get(pe_cache *c, int64_t id, int64_t gen)
{
	pe_model *m;

	pthread_mutex_lock(&c->lock);
	for (m = c->head; m; m = m->next)
		if (m->id == id && m->gen == gen)
			break;
	if (m) {
		m->refs++;
		if (m != c->head) {
			unlink_model(c, m);
			push_front(c, m);
		}
	}
	pthread_mutex_unlock(&c->lock);
	return m;
}

void pe_cache_put(pe_cache *c, pe_model *m)
{
	pe_model *old, *victims = NULL;

	m->refs = 1;
	pthread_mutex_lock(&c->lock);
	for (old = c->head; old;) {
		pe_model *next = old->next;
		if (old->id == m->id) {
			unlink_model(c, old);
			if (!old->refs) {
				old->next = victims;
				victims = old;
			}
		}
		old = next;
	}
	push_front(c, m);
	while (c->bytes > c->max && c->tail != m) {
		old = c->tail;
		unlink_model(c, old);
		if (!old->refs) {
			old->next = victims;
			victims = old;
		}
	}
	pthread_mutex_unlock(&c->lock);
	while (victims) {
		old = victims->next;
		pe_model_free(victims);
		victims = old;
	}
}

void pe_cache_release(pe_cache *c, pe_model *m)
{
	int drop;

	if (!m)
		return;
	pthread_mutex_lock(&c->lock);
	drop = --m->refs == 0 && m->dead;
	pthread_mutex_unlock(&c->lock);
	if (drop)
		pe_model_free(m);
}
