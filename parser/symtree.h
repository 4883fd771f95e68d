/*
 * symtree.h - perf's symbol lookup, reproduced so that names agree with
 * `perf script` where a dso's symbols overlap.
 *
 * perf keeps a dso's symbols in a red-black tree keyed by start address
 * (an equal start goes right) and answers a lookup by walking down from
 * the root until a symbol contains the address. Where symbols overlap (an
 * unsized symbol stretched to the next one over the PLT, a label inside a
 * function) the symbol it meets first wins, so the answer depends on the
 * tree's shape, which depends on the order of every insert and erase. This
 * module is a red-black tree with the same insert, erase and search, so a
 * caller replaying perf's operations in perf's order gets perf's answers.
 *
 * Nodes are numbered from 0 in insertion order; a node carries the
 * caller's item number. Not thread-safe; used while a table is built.
 */
#ifndef PERFHUB_SYMTREE_H
#define PERFHUB_SYMTREE_H

#include <stddef.h>
#include <stdint.h>

#define PD_SYMTREE_NONE UINT32_MAX

typedef struct pd_symtree pd_symtree;

pd_symtree *pd_symtree_new(void);
void pd_symtree_free(pd_symtree *t);

/* Insert [start, end) (end == start: unsized) for item; returns the node,
 * or PD_SYMTREE_NONE when out of memory. */
uint32_t pd_symtree_insert(pd_symtree *t, uint64_t start, uint64_t end, uint32_t item);
/* Remove a node from the tree (its number stays used). */
void pd_symtree_erase(pd_symtree *t, uint32_t node);

/* In address order (equal starts in insertion order); NONE at the end. */
uint32_t pd_symtree_first(const pd_symtree *t);
uint32_t pd_symtree_next(const pd_symtree *t, uint32_t node);

uint64_t pd_symtree_start(const pd_symtree *t, uint32_t node);
uint64_t pd_symtree_end(const pd_symtree *t, uint32_t node);
void pd_symtree_set_end(pd_symtree *t, uint32_t node, uint64_t end);
uint32_t pd_symtree_item(const pd_symtree *t, uint32_t node);

/* perf's search: from the root, left while ip < start, right while ip is
 * past the end (ip == end goes right unless the symbol is unsized), else
 * this node. Returns the node or NONE. */
uint32_t pd_symtree_find(const pd_symtree *t, uint64_t ip);

/* For tests: the root, and the tree's black height when it is a valid
 * red-black search tree (-1 when it is not). */
uint32_t pd_symtree_root(const pd_symtree *t);
int pd_symtree_check(const pd_symtree *t);

#endif
