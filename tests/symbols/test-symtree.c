/*
 * test-symtree.c - the red-black tree that reproduces perf's symbol
 * lookup: shapes after known inserts and erases (those decide which of
 * two overlapping symbols a lookup meets first), the red-black rules
 * after many random inserts and erases, address order with equal starts
 * in insertion order, and perf's search rules at a symbol's ends.
 */
#include <stdio.h>
#include <stdlib.h>

#include "symtree.h"

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
	printf(__VA_ARGS__); printf("\n"); } } while (0)

/* every node covers everything: a search stops at the root */
static uint64_t root_start(pd_symtree *t)
{
	return pd_symtree_start(t, pd_symtree_find(t, 500));
}

static void shapes(void)
{
	pd_symtree *t = pd_symtree_new();
	uint32_t n[8];

	for (int i = 1; i <= 5; i++)
		n[i] = pd_symtree_insert(t, (uint64_t)i, 1000, (uint32_t)i);
	/* 1,2,3: rotated to 2 on top; 4 recolours; 5 rotates under 2 */
	CHECK(root_start(t) == 2, "root after 1..5 is %llu", (unsigned long long)root_start(t));
	CHECK(pd_symtree_check(t) > 0, "invalid after 1..5");
	/* the root has two children: its successor (3) takes its place */
	pd_symtree_erase(t, n[2]);
	CHECK(root_start(t) == 3, "root after erasing 2 is %llu", (unsigned long long)root_start(t));
	CHECK(pd_symtree_check(t) > 0, "invalid after erase");
	pd_symtree_erase(t, n[3]);
	CHECK(root_start(t) == 4, "root after erasing 3 is %llu", (unsigned long long)root_start(t));
	CHECK(pd_symtree_check(t) > 0, "invalid after second erase");
	pd_symtree_free(t);
}

static void search_rules(void)
{
	pd_symtree *t = pd_symtree_new();
	uint32_t a = pd_symtree_insert(t, 100, 200, 0);
	uint32_t z = pd_symtree_insert(t, 300, 300, 1);	/* unsized */

	CHECK(pd_symtree_find(t, 100) == a, "start");
	CHECK(pd_symtree_find(t, 199) == a, "last byte");
	CHECK(pd_symtree_find(t, 200) == PD_SYMTREE_NONE, "end is outside");
	CHECK(pd_symtree_find(t, 99) == PD_SYMTREE_NONE, "before");
	CHECK(pd_symtree_find(t, 300) == z, "an unsized symbol covers its start");
	CHECK(pd_symtree_find(t, 301) == PD_SYMTREE_NONE, "and nothing else");
	pd_symtree_free(t);
}

static void random_ops(void)
{
	enum { N = 20000 };
	pd_symtree *t = pd_symtree_new();
	uint32_t *nodes = malloc(N * sizeof(*nodes));
	int *live = calloc(N, sizeof(*live));
	size_t nr_live = 0;
	uint64_t prev_start = 0;
	uint32_t prev_item = 0, x;
	int first = 1;

	srand(7);
	for (uint32_t i = 0; i < N; i++) {
		uint64_t s = (uint64_t)(rand() % 5000);	/* many equal starts */

		nodes[i] = pd_symtree_insert(t, s, s + 1 + (uint64_t)(rand() % 64), i);
		live[i] = 1;
		nr_live++;
		if (i % 3 == 2) {	/* erase one live node in three */
			uint32_t k = (uint32_t)rand() % (i + 1);

			while (!live[k])
				k = (k + 1) % (i + 1);
			pd_symtree_erase(t, nodes[k]);
			live[k] = 0;
			nr_live--;
		}
		if (i % 997 == 0)
			CHECK(pd_symtree_check(t) > 0, "invalid after %u operations", i);
	}
	CHECK(pd_symtree_check(t) > 0, "invalid at the end");
	for (x = pd_symtree_first(t); x != PD_SYMTREE_NONE; x = pd_symtree_next(t, x)) {
		uint64_t s = pd_symtree_start(t, x);
		uint32_t it = pd_symtree_item(t, x);

		CHECK(live[it], "erased item %u still in the tree", it);
		CHECK(first || s > prev_start || (s == prev_start && it > prev_item),
		      "order: %llu/%u after %llu/%u", (unsigned long long)s, it,
		      (unsigned long long)prev_start, prev_item);
		prev_start = s;
		prev_item = it;
		first = 0;
		nr_live--;
	}
	CHECK(nr_live == 0, "%zu live nodes not visited", nr_live);
	/* whatever the search returns contains the address */
	for (uint64_t ip = 0; ip < 5100; ip += 7) {
		x = pd_symtree_find(t, ip);
		CHECK(x == PD_SYMTREE_NONE ||
		      (pd_symtree_start(t, x) <= ip && ip < pd_symtree_end(t, x)),
		      "find(%llu) returned a symbol that does not contain it", (unsigned long long)ip);
	}
	free(nodes);
	free(live);
	pd_symtree_free(t);
}

int main(void)
{
	shapes();
	search_rules();
	random_ops();
	if (failures) {
		printf("%d failures\n", failures);
		return 1;
	}
	printf("symtree: ok\n");
	return 0;
}
