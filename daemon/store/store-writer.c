/*
 * store-writer.c - writing a parse: the engine's builder interns and
 * fills blocks on the parsing thread; a writer thread stores each full
 * block with the rows made since the last one in one short transaction
 * (so parsing and storing overlap on two cores) and fills the profile's
 * model from the same rows; the summary goes in the last transaction
 * (the aggregate is not stored: a model read back sums it from the
 * blocks), and the model, sealed, into the store's cache: the first question
 * after ready is answered without reading the profile back. Beside that
 * last transaction the prepare hook makes answers from the sealed model,
 * kept the moment the profile is ready; until the model is in the cache a
 * question about the profile waits for it (stw_await_finish).
 */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "store/store-int.h"

#define WRITER_QUEUE_MAX 4	/* batches waiting for the writer thread, at most */

/* Rows and (maybe) a packed block, stored in one transaction. */
typedef struct batch {
	struct batch *next;
	pe_row *rows;		/* owned (pe_rows_free) */
	size_t n;
	int with_block;
	pe_packed_block block;	/* its data owned */
} batch;

struct st_writer {
	st_store *st;
	int64_t id;
	pe_builder *b;
	st_persist_writer *pw;
	st_write_times times;	/* the writer thread's while it runs */
	atomic_int failed;
	/* the queue to the writer thread */
	pthread_t thread;
	int threaded;		/* the thread runs (else batches are stored here) */
	pthread_mutex_t lock;
	pthread_cond_t more, room;
	batch *head, *tail;
	size_t queued;
	int closing;		/* no more batches: drain and end */
	int discard;		/* aborting: free what is queued unstored */
	/* the profile's model, filled from the rows; NULL once it cannot be */
	pthread_mutex_t model_lock;
	pe_model *model;
	st_writer *next_finishing;	/* in st->finishing while it finishes */
	/* the prepare hook while it finishes (st->hook_lock held), what its
	 * make() made and how long that took */
	int hooked;
	st_prepare_hook hook;
	void *made;
	uint64_t prepare_ns;
	/* the finishing thread's progress (under lock): the model sealed (or
	 * freed), the hook's answers made */
	pthread_cond_t sealed_cv;
	int sealed, made_done;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void batch_free(batch *x)
{
	if (!x)
		return;
	pe_rows_free(x->rows, x->n);
	free((void *)x->block.data);
	free(x);
}

/* The model's part of a batch: what a backend's read_model would load
 * from these rows (the build-ids come from st_writer_dso, as the backend's
 * come from the dsos the parse noted, not from the maps). */
static void model_rows(st_writer *w, const pe_row *rows, size_t n)
{
	size_t i;

	pthread_mutex_lock(&w->model_lock);
	for (i = 0; w->model && i < n; i++)
		if (rows[i].kind != PE_ROW_MAP && pe_model_load_rows(w->model, &rows[i], 1) < 0) {
			pe_model_free(w->model);	/* the first question loads it */
			w->model = NULL;
		}
	pthread_mutex_unlock(&w->model_lock);
}

/* One batch into the backend (on the writer thread, or inline). */
static int store_batch(st_writer *w, batch *x)
{
	if (atomic_load(&w->failed))
		return -1;
	if (w->st->ops->writer_write(w->pw, x->rows, x->n, x->with_block ? &x->block : NULL,
				     &w->times) < 0) {
		atomic_store(&w->failed, 1);
		return -1;
	}
	return 0;
}

static void *writer_thread(void *arg)
{
	st_writer *w = arg;

	for (;;) {
		batch *x;
		int drop;

		pthread_mutex_lock(&w->lock);
		while (!w->head && !w->closing)
			pthread_cond_wait(&w->more, &w->lock);
		x = w->head;
		drop = w->discard;
		if (x) {
			w->head = x->next;
			if (!w->head)
				w->tail = NULL;
			w->queued--;
			pthread_cond_signal(&w->room);
		}
		pthread_mutex_unlock(&w->lock);
		if (!x)
			return NULL;	/* closing and drained */
		if (!drop)
			store_batch(w, x);
		batch_free(x);
	}
}

/* A batch to the writer thread, waiting while the queue is full. */
static int enqueue(st_writer *w, batch *x)
{
	if (!w->threaded) {
		int rc = store_batch(w, x);

		batch_free(x);
		return rc;
	}
	pthread_mutex_lock(&w->lock);
	if (w->queued >= WRITER_QUEUE_MAX) {
		uint64_t t0 = now_ns();

		while (w->queued >= WRITER_QUEUE_MAX)
			pthread_cond_wait(&w->room, &w->lock);
		w->times.queue_ns += now_ns() - t0;
	}
	if (w->tail)
		w->tail->next = x;
	else
		w->head = x;
	w->tail = x;
	w->queued++;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

/* Ends the writer thread once it stored (or, discarding, dropped) what is
 * queued. */
static void stop_thread(st_writer *w, int discard)
{
	if (!w->threaded)
		return;
	pthread_mutex_lock(&w->lock);
	w->closing = 1;
	w->discard = discard;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	w->threaded = 0;
}

/* The rows waiting and (with_block) the block being filled, to the writer. */
static int flush(st_writer *w, int with_block)
{
	pe_packed_block pb;
	batch *x;
	int rc;

	if (atomic_load(&w->failed) || pe_builder_failed(w->b) || !(x = calloc(1, sizeof(*x))))
		goto fail;
	if (with_block) {
		uint64_t t0 = now_ns();

		rc = pe_builder_pack_block(w->b, &pb);
		if (rc < 0)
			goto fail_batch;
		if (rc == 0) {
			void *copy = malloc(pb.len ? pb.len : 1);

			if (!copy)
				goto fail_batch;
			/* the packer's buffer is reused by the next block */
			memcpy(copy, pb.data, pb.len);
			x->block = pb;
			x->block.data = copy;
			x->with_block = 1;
			/* only this thread counts these two */
			w->times.compress_ns += now_ns() - t0;
			w->times.blocks++;
		}
	}
	x->rows = pe_builder_take_rows(w->b, &x->n);
	if (!x->n && !x->with_block) {
		batch_free(x);
		return 0;
	}
	/* the model takes the rows as they are queued: once the last are,
	 * it can be sealed while the backend still stores them */
	model_rows(w, x->rows, x->n);
	return enqueue(w, x);
fail_batch:
	batch_free(x);
fail:
	atomic_store(&w->failed, 1);
	return -1;
}

/* The builder's flush hook: it fills up as the parse runs. */
static int flush_hook(void *ctx, pe_builder *b, int with_block)
{
	(void)b;
	return flush(ctx, with_block);
}

st_writer *st_writer_begin(st_store *st, int64_t id)
{
	st_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->st = st;
	w->id = id;
	atomic_init(&w->failed, 0);
	pthread_mutex_init(&w->lock, NULL);
	pthread_mutex_init(&w->model_lock, NULL);
	pthread_cond_init(&w->more, NULL);
	pthread_cond_init(&w->room, NULL);
	pthread_cond_init(&w->sealed_cv, NULL);
	if (!(w->b = pe_builder_new()) || !(w->pw = st->ops->writer_begin(st->p, id))) {
		if (!w->b)
			log_warn("msg=\"out of memory\" what=\"writer\" profile=%lld", (long long)id);
		pe_builder_free(w->b);
		free(w);
		return NULL;
	}
	/* without a model or a thread the parse is stored as before, slower */
	w->model = pe_model_new(id, 0);
	w->threaded = pthread_create(&w->thread, NULL, writer_thread, w) == 0;
	if (w->threaded)
		pthread_setname_np(w->thread, "ph-store");	/* for top -H */
	pe_builder_set_flush(w->b, flush_hook, w);
	return w;
}

static void writer_free(st_writer *w)
{
	pe_model_free(w->model);
	pe_builder_free(w->b);
	pthread_mutex_destroy(&w->lock);
	pthread_mutex_destroy(&w->model_lock);
	pthread_cond_destroy(&w->more);
	pthread_cond_destroy(&w->room);
	pthread_cond_destroy(&w->sealed_cv);
	free(w);
}

void st_writer_abort(st_writer *w)
{
	if (!w)
		return;
	stop_thread(w, 1);
	w->st->ops->writer_abort(w->pw);
	writer_free(w);
}

pe_builder *st_writer_builder(st_writer *w)
{
	return w->b;
}

int st_writer_dso(st_writer *w, const char *path, const char *build_id_hex)
{
	uint32_t s = pe_builder_string_find(w->b, path);
	int rc = 0;

	/* a backend joins the dsos the parse noted to the profile's strings */
	if (!s || !build_id_hex || !build_id_hex[0])
		return 0;
	pthread_mutex_lock(&w->model_lock);
	if (w->model && pe_model_add_build_id(w->model, s, build_id_hex) < 0) {
		pe_model_free(w->model);
		w->model = NULL;
		rc = -1;
	}
	pthread_mutex_unlock(&w->model_lock);
	return rc;
}

/* The model's aggregate (in first_seq order, as the builder made it). */
static void model_agg(st_writer *w)
{
	const pe_agg_row *agg;
	size_t n, i;

	if (!w->model)
		return;
	agg = pe_builder_agg_rows(w->b, &n);
	for (i = 0; i < n; i++)
		if (pe_model_add_agg(w->model, &agg[i]) < 0) {
			pe_model_free(w->model);
			w->model = NULL;
			return;
		}
}

/* From before the last transaction until the model is in the cache (or
 * the finish failed): the parse is finishing. */
static void finishing_begin(st_writer *w)
{
	pthread_mutex_lock(&w->st->finish_lock);
	w->next_finishing = w->st->finishing;
	w->st->finishing = w;
	pthread_mutex_unlock(&w->st->finish_lock);
}

static void finishing_end(st_writer *w)
{
	st_writer **pp;

	pthread_mutex_lock(&w->st->finish_lock);
	for (pp = &w->st->finishing; *pp; pp = &(*pp)->next_finishing)
		if (*pp == w) {
			*pp = w->next_finishing;
			pthread_cond_broadcast(&w->st->finished);
			break;
		}
	pthread_mutex_unlock(&w->st->finish_lock);
}

/* Under finish_lock. */
static int finishing(st_store *st, int64_t id)
{
	st_writer *w;

	for (w = st->finishing; w; w = w->next_finishing)
		if (w->id == id)
			return 1;
	return 0;
}

int stw_finishing(st_store *st, int64_t id)
{
	int rc;

	pthread_mutex_lock(&st->finish_lock);
	rc = finishing(st, id);
	pthread_mutex_unlock(&st->finish_lock);
	return rc;
}

void stw_await_finish(st_store *st, int64_t id)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ST_FINISH_WAIT_S;
	pthread_mutex_lock(&st->finish_lock);
	while (finishing(st, id))
		if (pthread_cond_timedwait(&st->finished, &st->finish_lock, &until))
			break;	/* waited long enough: read it back */
	pthread_mutex_unlock(&st->finish_lock);
}

/* The prepare hook of this finish, held until prepare_end. */
static void prepare_begin(st_writer *w)
{
	pthread_rwlock_rdlock(&w->st->hook_lock);
	w->hooked = 1;
	w->hook = w->st->hook;
}

/* What the hook made, kept for the profile ready as generation gen. */
static void prepare_keep(st_writer *w, int64_t gen)
{
	if (w->made)
		w->hook.keep(w->hook.ctx, w->id, gen, w->made);
	w->made = NULL;
}

static void prepare_end(st_writer *w)
{
	if (w->made)
		w->hook.drop(w->hook.ctx, w->made);
	w->made = NULL;
	if (w->hooked)
		pthread_rwlock_unlock(&w->st->hook_lock);
	w->hooked = 0;
}

static void progress(st_writer *w, int *flag)
{
	pthread_mutex_lock(&w->lock);
	*flag = 1;
	pthread_cond_broadcast(&w->sealed_cv);
	pthread_mutex_unlock(&w->lock);
}

/* The model sealed, with the name order the first flame graph needs, then
 * the prepare hook's answers made from it (a thread beside the backend's
 * last transaction); the model is freed on failure. */
static void *model_finish(void *arg)
{
	st_writer *w = arg;
	st_finishing f;
	uint64_t t0;

	if (pe_model_seal(w->model) < 0 || pe_model_order_names(w->model) < 0) {
		pe_model_free(w->model);
		w->model = NULL;
	}
	progress(w, &w->sealed);
	if (w->model && w->hook.make) {
		t0 = now_ns();
		f.m = w->model;
		w->made = w->hook.make(w->hook.ctx, &f);
		w->prepare_ns = now_ns() - t0;
	}
	progress(w, &w->made_done);
	return NULL;
}

/* Once the finishing thread sealed the model: 1 when the hook's answers
 * are made too, 0 while they are still being made. */
static int sealed_wait(st_writer *w)
{
	int made;

	pthread_mutex_lock(&w->lock);
	while (!w->sealed)
		pthread_cond_wait(&w->sealed_cv, &w->lock);
	made = w->made_done;
	pthread_mutex_unlock(&w->lock);
	return made;
}

/* After the last transaction: the model into the cache for the profile
 * ready as generation gen (0: not ready, or the backend does not say),
 * and the hook's answers kept before it - unless they are still being made
 * once the model is sealed: then the profile's questions are not held for
 * them, and they are kept when done. finisher: the finishing thread, NULL
 * when it ran here. */
static void place(st_writer *w, int64_t gen, pthread_t *finisher)
{
	int placed = 0;

	if (finisher && !sealed_wait(w) && gen > 0 && w->model) {
		pe_model_set_gen(w->model, gen);
		pe_cache_put(w->st->cache, w->model);	/* our reference stays */
		placed = 1;
		finishing_end(w);	/* the answers are late: questions go on */
	}
	if (finisher)
		pthread_join(*finisher, NULL);
	w->times.prepare_ns = w->prepare_ns;
	if (gen > 0 && w->model) {
		/* placed: readers have it already, its generation set */
		if (!placed)
			pe_model_set_gen(w->model, gen);
		prepare_keep(w, gen);
		if (!placed)
			pe_cache_put(w->st->cache, w->model);
		pe_cache_release(w->st->cache, w->model);
		w->model = NULL;
	}
	prepare_end(w);
	finishing_end(w);
}

int st_writer_finish(st_writer *w, const st_summary *x, st_write_times *times)
{
	pthread_t sealer;
	int sealing = 0;
	uint64_t t0;
	int rc = -1;

	/* the leaf addresses, the last block alone, then the summary and the
	 * status: ready and complete become visible at once */
	if (pe_builder_flush(w->b) < 0)
		goto fail;
	/* every row is in the model: it is sealed (and the first answers
	 * made from it) beside the backend storing the last batches, which
	 * on a system-wide build took 50-85 ms, the sealing 35-50 */
	model_agg(w);
	if (w->model) {
		finishing_begin(w);
		prepare_begin(w);
	}
	if (w->model && pthread_create(&sealer, NULL, model_finish, w) != 0) {
		w->hook.make = NULL;	/* made here, they would hold ready back */
		model_finish(w);
	} else if (w->model) {
		sealing = 1;
	}
	t0 = now_ns();
	stop_thread(w, 0);
	w->times.queue_ns += now_ns() - t0;
	if (atomic_load(&w->failed))
		goto fail;
	if (pe_builder_leaf_dropped(w->b))
		log_info("msg=\"leaf addresses capped\" profile=%lld kept=%d samples_left_out=%llu",
			 (long long)w->id, PE_MAX_LEAF_ADDRS,
			 (unsigned long long)pe_builder_leaf_dropped(w->b));
	w->times.generation = 0;
	rc = w->st->ops->writer_finish(w->pw, x, &w->times);
	w->pw = NULL;
	/* a backend that says which generation it made gets its model cached */
	place(w, rc == 0 ? w->times.generation : 0, sealing ? &sealer : NULL);
	goto out;
fail:
	if (sealing)
		pthread_join(sealer, NULL);
	prepare_end(w);
	finishing_end(w);
	stop_thread(w, 1);
	w->st->ops->writer_abort(w->pw);
out:
	if (times)
		*times = w->times;
	writer_free(w);
	return rc;
}
