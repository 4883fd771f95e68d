/*
 * jsonbuf.h - JSON text written straight into a growing buffer, for
 * answers too large to build as jansson objects first (flame graphs of
 * millions of nodes). Strings are escaped; bytes that are not UTF-8
 * become U+FFFD.
 */
#ifndef PERFHUB_LIB_JSONBUF_H
#define PERFHUB_LIB_JSONBUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct jbuf {
	char *p;		/* malloc'ed; one byte beyond len is always free */
	size_t len, cap;
	int oom;		/* sticky: an allocation failed */
} jbuf;

void jb_add(jbuf *b, const char *s, size_t n);
/* s[0..n) as a JSON string, quotes included. */
void jb_json_str(jbuf *b, const char *s, size_t n);
/* A tree written depth first: {"name", ["dso",] ..., "children": [...]}. */
typedef struct jb_tree {
	jbuf b;
	int comma;		/* a sibling was written before */
} jb_tree;
/* The start of a node: `{"name":NAME` and `,"dso":DSO` when there is one
 * (the caller adds its values and `,"children":[`). */
void jb_node_open(jb_tree *t, const char *name, size_t len, const char *dso);
/* A flame graph node's start, `{"name":NAME[,"dso":DSO],"value":N,"children":[`:
 * a tree callback's enter() (ctx: the jb_tree); -1 once out of memory.
 * /flamegraph and `perfhub export --format json` write their trees with it. */
int jb_value_node_open(void *ctx, const char *name, size_t len, const char *dso, uint64_t value);
/* The end of a node: `]}`. A tree callback's leave() (ctx: the jb_tree);
 * -1 once out of memory. */
int jb_node_close(void *ctx);
/* Decimal digits of v, written backwards from end; returns the start. */
char *jb_u64_dec(char *end, uint64_t v);

#endif
