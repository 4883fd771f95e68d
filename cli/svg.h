/*
 * svg.h - a flame graph as one self-contained interactive SVG file (for CI
 * artifacts): frames as rectangles, the root at the bottom, each with a
 * tooltip (name, DSO, value, share); a small script inside zooms into a
 * frame on click, searches by regular expression (Ctrl-F or the "Search"
 * button) and shows the matched share, and resets. Nothing is fetched
 * from outside.
 *
 * The tree comes as a flame graph is walked (depth first, enter/leave,
 * the root first): from the API's JSON (svg_tree_add_json) or straight
 * from the engine (svg_tree_enter/svg_tree_leave as a pe_tree_cb). Frames
 * narrower than SVG_MIN_WIDTH pixels are left out as they come, so the
 * memory is that of what is drawn.
 */
#ifndef PERFHUB_CLI_SVG_H
#define PERFHUB_CLI_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#define SVG_DEFAULT_WIDTH 1200
#define SVG_MIN_WIDTH 0.1	/* pixels: narrower frames are not drawn */
#define SVG_MAX_FRAMES 2000000	/* frames drawn at most */

typedef struct svg_tree svg_tree;

/* An empty tree for a drawing `width` pixels wide (0: the default). */
svg_tree *svg_tree_new(unsigned width);
void svg_tree_free(svg_tree *t);

/* One node, then its children, then svg_tree_leave (pe_tree_cb's shape;
 * ctx is the tree). Values are numbers (normalized trees have fractions). */
int svg_tree_enter(void *ctx, const char *name, size_t len, const char *dso, uint64_t value);
int svg_tree_enter_real(void *ctx, const char *name, size_t len, const char *dso, double value);
int svg_tree_leave(void *ctx);

/* A tree as the API answers it: {"name", "value", ["dso",] "children"}.
 * 0, or -1 when it is not one (or out of memory). */
int svg_tree_add_json(svg_tree *t, json_t *root);

typedef struct svg_opts {
	const char *title;	/* NULL: "Flame Graph" */
	const char *subtitle;	/* a line under it (what was drawn), or NULL */
	const char *unit;	/* of the values, in tooltips: "samples", "ns" ... */
} svg_opts;

/* The drawing. 0, or -1 on a write error or when the tree is empty. */
int svg_write(FILE *out, const svg_tree *t, const svg_opts *o);

#endif
