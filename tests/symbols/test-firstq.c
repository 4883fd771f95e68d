/*
 * test-firstq.c - first questions settled in time order across threads:
 * a question asked first in wall time but later in time order gives way
 * to the earlier one; a settled one is final; a thread that is done
 * holds no one up; the table's growth keeps every entry.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "firstq.h"

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
	printf(__VA_ARGS__); printf("\n"); } } while (0)

static pd_firstq *q;

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&t, NULL);
}

/* thread 1: asks about function 7 at sample 5, but 50 ms after thread 0
 * asked at sample 10; then moves on past 10 */
static void *late_but_earlier(void *arg)
{
	pd_firstq_answer a = { .off = 500, .first = "sym_at_500", .kept = NULL };

	(void)arg;
	nap_ms(50);
	CHECK(pd_firstq_ask(q, 1, 3, 7, &a) == 0, "thread 1's question failed");
	CHECK(a.off == 500, "thread 1 got the answer of sample %llu's question",
	      (unsigned long long)a.off);
	pd_firstq_at(q, 1, 20);
	/* function 8: nobody asked before sample 20 but thread 0, at 10 */
	a = (pd_firstq_answer){ .off = 900 };
	CHECK(pd_firstq_ask(q, 1, 3, 8, &a) == 0 && a.off == 100,
	      "function 8: thread 0's question at sample 10 not kept (%llu)",
	      (unsigned long long)a.off);
	pd_firstq_done(q, 1);
	return NULL;
}

int main(void)
{
	pthread_t t;
	pd_firstq_answer a;

	q = pd_firstq_new(2);
	CHECK(q != NULL, "pd_firstq_new");
	if (!q)
		return 1;
	pd_firstq_at(q, 0, 10);
	pd_firstq_at(q, 1, 5);
	if (pthread_create(&t, NULL, late_but_earlier, NULL) != 0) {
		printf("SKIP: no second thread\n");
		return 77;
	}
	/* waits for thread 1 to pass sample 10, by when it has asked at 5 */
	a = (pd_firstq_answer){ .off = 1000, .first = "sym_at_1000", .kept = "kept" };
	CHECK(pd_firstq_ask(q, 0, 3, 7, &a) == 0, "thread 0's question failed");
	CHECK(a.off == 500 && a.kept == NULL, "thread 0's question at sample 10 was kept "
	      "over thread 1's at 5 (off %llu)", (unsigned long long)a.off);
	/* another dso's function 7 is another function */
	a = (pd_firstq_answer){ .off = 42 };
	CHECK(pd_firstq_ask(q, 0, 4, 7, &a) == 0 && a.off == 42, "dso 4's function 7 mixed up");
	/* function 8 at sample 10: thread 1 is at 20 by the time it asks */
	a = (pd_firstq_answer){ .off = 100 };
	CHECK(pd_firstq_ask(q, 0, 3, 8, &a) == 0 && a.off == 100, "function 8 not kept");
	/* thread 1 waits for this one to pass its sample 20 */
	pd_firstq_at(q, 0, 30);
	pthread_join(t, NULL);
	/* settled answers are final; thread 1 done: no waiting */
	for (unsigned long f = 100; f < 5100; f++) {
		a = (pd_firstq_answer){ .off = f * 3 };
		if (pd_firstq_ask(q, 0, 5, f, &a) != 0 || a.off != f * 3) {
			CHECK(0, "function %lu: %llu", f, (unsigned long long)a.off);
			break;
		}
	}
	a = (pd_firstq_answer){ .off = 1 };
	CHECK(pd_firstq_ask(q, 0, 3, 7, &a) == 0 && a.off == 500,
	      "function 7 changed after the table grew");
	for (unsigned long f = 100; f < 5100; f += 999) {
		a = (pd_firstq_answer){ .off = 0 };
		CHECK(pd_firstq_ask(q, 0, 5, f, &a) == 0 && a.off == f * 3,
		      "function %lu lost in the growth", f);
	}
	pd_firstq_free(q);
	if (!failures)
		printf("PASS\n");
	return failures ? 1 : 0;
}
