/*
 * tree-int.h - the trees the engine hands out (internal to engine/):
 * nodes keyed by frame name (name string id * 2 + "_[k]" mark) or comm
 * text under a parent, values added where paths end and summed upwards,
 * then children put in bytewise name order and handed out depth first
 * (pe_tree_cb). The flame graph and the sandwich view are built on it.
 */
#ifndef PERFHUB_ENGINE_TREE_INT_H
#define PERFHUB_ENGINE_TREE_INT_H

#include "engine/query-int.h"

#define PE_TKEY_COMM (1ULL << 63)	/* comm nodes: PE_TKEY_COMM | comm text id */

typedef struct pe_tnode {
	uint64_t key;		/* frame name key, or PE_TKEY_COMM | comm text id */
	uint32_t parent, first_child, next;
	uint32_t dso;		/* string id of the DSO of the first frame placed here */
	uint64_t value;
} pe_tnode;

typedef struct pe_ttree {
	pe_tnode *n;		/* n[0] is the root */
	size_t nr, cap;
	uint32_t *slots;	/* (parent, key) -> node + 1 */
	size_t nr_slots;
} pe_ttree;

/* A tree holding only its root (key root_key). 0, or -1 out of memory. */
int pe_ttree_init(pe_ttree *t, uint64_t root_key);
void pe_ttree_free(pe_ttree *t);
/* The child of parent with key, added when missing; 0 out of memory. */
uint32_t pe_ttree_child(pe_ttree *t, uint32_t parent, uint64_t key);

/* The comm texts of the first level, as pe_comm_text writes them, by id. */
typedef struct pe_comms {
	pe_strmap map;
	char **text;		/* by id: the map's copies */
	size_t n;
	pe_sbuf b;
} pe_comms;

int pe_comms_init(pe_comms *c);
void pe_comms_free(pe_comms *c);
/* The key of row r's comm node (PE_TKEY_COMM | id). 0 out of memory. */
uint64_t pe_comms_key(pe_comms *c, const pe_model *m, const pe_filter *f, const pe_agg_row *r);

/* How children are ordered: all by their text, or (a flame graph) the
 * root's children (comms) by text and frames below by the name order the
 * model keeps (pe_model_ranks), which is the same order computed once. */
enum { PE_TSORT_TEXT, PE_TSORT_FLAME };

/* Values summed upwards (each node's value is then its subtree's),
 * max_nodes applied (0 = every node), children ordered, and the tree
 * handed out depth first. The root is named root_name (NULL: by its key,
 * with its dso). 0, a callback's non-zero return, or -1. */
int pe_ttree_emit(pe_model *m, pe_ttree *t, const pe_comms *comms, const char *root_name,
		  size_t max_nodes, int sort, const pe_tree_cb *cb, void *ctx);

#endif
