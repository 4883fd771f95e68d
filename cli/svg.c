/* svg.c - a flame graph as one self-contained interactive SVG: layout, escaping, the script. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svg.h"

#define PAD 10			/* pixels left and right */
#define FRAME_H 16		/* pixels per level */
#define HEAD_H 54		/* title, subtitle, buttons */
#define FOOT_H 24		/* the details line */
#define CHAR_W 7.2		/* of the 12px monospace text */
#define MAX_DEPTH 65536

typedef struct frame {
	char *name, *dso;
	double x, value;	/* in value units from the root's left edge */
	uint32_t depth;
} frame;

struct svg_tree {
	unsigned width;
	frame *f;
	size_t n, cap;
	double total;		/* the root's value */
	double *next_x;		/* per open level: where its next child starts */
	size_t sp, cap_sp;
	size_t skip;		/* open levels inside a frame not drawn */
	uint32_t max_depth;
	int failed;
};

svg_tree *svg_tree_new(unsigned width)
{
	svg_tree *t = calloc(1, sizeof(*t));

	if (t)
		t->width = width ? width : SVG_DEFAULT_WIDTH;
	return t;
}

void svg_tree_free(svg_tree *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++) {
		free(t->f[i].name);
		free(t->f[i].dso);
	}
	free(t->f);
	free(t->next_x);
	free(t);
}

static double px_per_value(const svg_tree *t)
{
	return t->total > 0 ? (double)(t->width - 2 * PAD) / t->total : 0;
}

int svg_tree_enter_real(void *ctx, const char *name, size_t len, const char *dso, double value)
{
	svg_tree *t = ctx;
	frame *f;
	double x = 0;

	if (t->skip) {
		t->skip++;
		return 0;
	}
	if (t->sp) {
		x = t->next_x[t->sp - 1];
		t->next_x[t->sp - 1] += value;
		/* too narrow to see, or too many: left out with what is above it */
		if (value * px_per_value(t) < SVG_MIN_WIDTH || t->n >= SVG_MAX_FRAMES) {
			t->skip = 1;
			return 0;
		}
	} else if (t->n) {
		t->failed = 1;	/* a second root */
		return -1;
	} else {
		t->total = value;
	}
	if (t->sp == t->cap_sp) {
		size_t ncap = t->cap_sp ? 2 * t->cap_sp : 256;
		double *p = ncap <= MAX_DEPTH ? realloc(t->next_x, ncap * sizeof(*p)) : NULL;
		if (!p)
			goto fail;
		t->next_x = p;
		t->cap_sp = ncap;
	}
	if (t->n == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 4096;
		frame *p = realloc(t->f, ncap * sizeof(*p));
		if (!p)
			goto fail;
		t->f = p;
		t->cap = ncap;
	}
	f = &t->f[t->n];
	memset(f, 0, sizeof(*f));
	if (!(f->name = malloc(len + 1)) || (dso && !(f->dso = strdup(dso)))) {
		free(f->name);
		goto fail;
	}
	memcpy(f->name, name, len);
	f->name[len] = 0;
	f->x = x;
	f->value = value;
	f->depth = (uint32_t)t->sp;
	if (f->depth > t->max_depth)
		t->max_depth = f->depth;
	t->n++;
	t->next_x[t->sp++] = x;
	return 0;
fail:
	t->failed = 1;
	return -1;
}

int svg_tree_enter(void *ctx, const char *name, size_t len, const char *dso, uint64_t value)
{
	return svg_tree_enter_real(ctx, name, len, dso, (double)value);
}

int svg_tree_leave(void *ctx)
{
	svg_tree *t = ctx;

	if (t->skip)
		t->skip--;
	else if (t->sp)
		t->sp--;
	else
		return -1;
	return 0;
}

int svg_tree_add_json(svg_tree *t, json_t *root)
{
	/* depth first without recursion: (node, next child) pairs */
	typedef struct { json_t *node; size_t next; } level;
	level *st = malloc(MAX_DEPTH * sizeof(*st));
	size_t sp = 0;
	int rc = -1;

	if (!st)
		return -1;
	st[sp++] = (level){ root, 0 };
	while (sp) {
		level *l = &st[sp - 1];
		json_t *kids = json_object_get(l->node, "children");

		if (l->next == 0) {
			json_t *name = json_object_get(l->node, "name");
			json_t *value = json_object_get(l->node, "value");
			if (!json_is_string(name) || !json_is_number(value))
				goto out;
			if (svg_tree_enter_real(t, json_string_value(name), json_string_length(name),
						json_string_value(json_object_get(l->node, "dso")),
						json_number_value(value)) < 0)
				goto out;
		}
		if (json_is_array(kids) && l->next < json_array_size(kids)) {
			if (sp == MAX_DEPTH)
				goto out;
			st[sp] = (level){ json_array_get(kids, l->next++), 0 };
			sp++;
			continue;
		}
		svg_tree_leave(t);
		sp--;
	}
	rc = 0;
out:
	free(st);
	return rc;
}

/* ---- writing ---------------------------------------------------------------------- */

/* UTF-8 sequence length at s (n bytes left), 0 when not valid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t need, k;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 4;
	else
		return 0;
	if (n < need)
		return 0;
	for (k = 1; k < need; k++)
		if ((s[k] & 0xc0) != 0x80)
			return 0;
	return need;
}

/* Text for XML: escaped, control characters and bytes that are not UTF-8
 * as '?'. At most max characters, the last two ".." when cut (max 0: all). */
static void xml_text(FILE *out, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i, chars = 0, limit = (size_t)-1, q;

	if (max) {
		for (i = 0; i < n; i += q ? q : 1, chars++)
			q = utf8_seq(p + i, n - i);
		if (chars > max)
			limit = max > 2 ? max - 2 : 0;
		chars = 0;
	}
	for (i = 0; i < n; i += q ? q : 1, chars++) {
		q = utf8_seq(p + i, n - i);
		if (chars == limit) {
			fputs("..", out);
			return;
		}
		if (!q || (p[i] < 0x20 && p[i] != '\t'))
			fputc('?', out);
		else if (q > 1)
			fwrite(p + i, 1, q, out);
		else if (p[i] == '&')
			fputs("&amp;", out);
		else if (p[i] == '<')
			fputs("&lt;", out);
		else if (p[i] == '>')
			fputs("&gt;", out);
		else if (p[i] == '"')
			fputs("&quot;", out);
		else if (p[i] == '\'')
			fputs("&apos;", out);
		else
			fputc(p[i], out);
	}
}

/* flamegraph.pl's warm colours, from the name (the same name, the same colour). */
static void colour(const char *name, unsigned rgb[3])
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	rgb[0] = 205 + h % 51;
	rgb[1] = (h >> 8) % 231;
	rgb[2] = (h >> 16) % 56;
}

static void number(FILE *out, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		fprintf(out, "%.0f", v);
	else
		fprintf(out, "%.4g", v);
}

/* Click to zoom, search, reset; the details line. ES5, no library. */
static const char script[] =
	"(function () {\n"
	"var svg = document.documentElement, W = +svg.getAttribute('width'), PAD = 10, CW = 7.2;\n"
	"var frames = [], gs = svg.getElementsByTagName('g'), i;\n"
	"var details = document.getElementById('details'), matched = document.getElementById('matched');\n"
	"var unzoom = document.getElementById('unzoom');\n"
	"for (i = 0; i < gs.length; i++) {\n"
	"  var g = gs[i];\n"
	"  if (g.getAttribute('class') !== 'f') continue;\n"
	"  var r = g.getElementsByTagName('rect')[0];\n"
	"  var f = { g: g, r: r, t: g.getElementsByTagName('text')[0], n: g.getAttribute('data-n'),\n"
	"            x: +r.getAttribute('x'), w: +r.getAttribute('width'), y: +r.getAttribute('y'),\n"
	"            fill: r.getAttribute('fill'), tip: g.getElementsByTagName('title')[0].textContent };\n"
	"  frames.push(f);\n"
	"  (function (f) {\n"
	"    g.onclick = function () { zoom(f); };\n"
	"    g.onmouseover = function () { details.textContent = f.tip; };\n"
	"    g.onmouseout = function () { details.textContent = ' '; };\n"
	"  })(f);\n"
	"}\n"
	"function fit(f, x, w) {\n"
	"  var n = Math.floor((w - 6) / CW), s = f.n;\n"
	"  f.r.setAttribute('x', x); f.r.setAttribute('width', w); f.t.setAttribute('x', x + 3);\n"
	"  if (n < 3) s = ''; else if (s.length > n) s = s.substring(0, n - 2) + '..';\n"
	"  f.t.textContent = s;\n"
	"}\n"
	"function show(f, on) { f.g.style.display = on ? '' : 'none'; }\n"
	"function zoom(z) {\n"
	"  var scale = (W - 2 * PAD) / z.w, e = 1e-6;\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], on;\n"
	"    if (f.y > z.y) {\n"
	"      on = f.x <= z.x + e && f.x + f.w >= z.x + z.w - e;\n"
	"      show(f, on); f.g.style.opacity = on ? 0.6 : '';\n"
	"      if (on) fit(f, PAD, W - 2 * PAD);\n"
	"    } else {\n"
	"      on = f.x >= z.x - e && f.x + f.w <= z.x + z.w + e;\n"
	"      show(f, on); f.g.style.opacity = '';\n"
	"      if (on) fit(f, PAD + (f.x - z.x) * scale, f.w * scale);\n"
	"    }\n"
	"  }\n"
	"  unzoom.style.opacity = 1;\n"
	"}\n"
	"function reset() {\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i];\n"
	"    show(f, true); f.g.style.opacity = ''; fit(f, f.x, f.w);\n"
	"  }\n"
	"  unzoom.style.opacity = 0.3;\n"
	"}\n"
	"function search(re) {\n"
	"  var hits = [], sum = 0, end = -1, i;\n"
	"  for (i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], hit = re && re.test(f.n);\n"
	"    f.r.setAttribute('fill', hit ? 'rgb(230,0,230)' : f.fill);\n"
	"    if (hit) hits.push([f.x, f.x + f.w]);\n"
	"  }\n"
	"  hits.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  for (i = 0; i < hits.length; i++) {\n"
	"    if (hits[i][1] <= end) continue;\n"
	"    sum += hits[i][1] - Math.max(hits[i][0], end); end = hits[i][1];\n"
	"  }\n"
	"  matched.textContent = re ? 'Matched: ' + (100 * sum / (W - 2 * PAD)).toFixed(1) + '%' : ' ';\n"
	"}\n"
	"function ask() {\n"
	"  var s = window.prompt('Search (a regular expression)', '');\n"
	"  if (s === null) return;\n"
	"  try { search(s ? new RegExp(s) : null); } catch (err) { matched.textContent = 'Bad expression'; }\n"
	"}\n"
	"unzoom.onclick = reset;\n"
	"document.getElementById('search').onclick = ask;\n"
	"document.addEventListener('keydown', function (ev) {\n"
	"  if ((ev.ctrlKey && ev.key === 'f') || ev.key === '/') { ev.preventDefault(); ask(); }\n"
	"  else if (ev.key === 'Escape') { search(null); reset(); }\n"
	"});\n"
	"})();\n";

static void write_frame(FILE *out, const svg_tree *t, const frame *f, const svg_opts *o)
{
	double k = px_per_value(t), x = PAD + f->x * k, w = f->value * k;
	double y = HEAD_H + (double)(t->max_depth - f->depth) * FRAME_H;
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
	unsigned rgb[3] = { 200, 200, 200 };

	if (f->depth)
		colour(f->name, rgb);
	fputs("<g class=\"f\" data-n=\"", out);
	xml_text(out, f->name, 0);
	fputs("\"><title>", out);
	xml_text(out, f->name, 0);
	if (f->dso) {
		fputs(" (", out);
		xml_text(out, f->dso, 0);
		fputc(')', out);
	}
	fputs(": ", out);
	number(out, f->value);
	fprintf(out, " %s, %.2f%%</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
		"fill=\"rgb(%u,%u,%u)\" rx=\"2\"/><text x=\"%.2f\" y=\"%.1f\">", o->unit ? o->unit : "",
		t->total > 0 ? 100 * f->value / t->total : 0, x, y, w, FRAME_H - 1, rgb[0], rgb[1],
		rgb[2], x + 3, y + 11.5);
	if (fit >= 3)
		xml_text(out, f->name, fit);
	fputs("</text></g>\n", out);
}

int svg_write(FILE *out, const svg_tree *t, const svg_opts *o)
{
	unsigned h;
	size_t i;

	if (!t->n || t->failed)
		return -1;
	h = HEAD_H + (t->max_depth + 1) * FRAME_H + FOOT_H;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font-family: monospace; font-size: 12px; fill: #000; } "
		"g.f:hover rect { stroke: #000; stroke-width: 0.5; } g.f { cursor: pointer; } "
		"#title { font-size: 17px; } .btn { cursor: pointer; fill: #225; }</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f6f6f0\"/>\n",
		t->width, h, t->width, h, t->width, h);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"22\" text-anchor=\"middle\">", t->width / 2);
	xml_text(out, o->title ? o->title : "Flame Graph", 0);
	fprintf(out, "</text>\n<text x=\"%u\" y=\"40\" text-anchor=\"middle\">", t->width / 2);
	xml_text(out, o->subtitle ? o->subtitle : "", 0);
	fprintf(out, "</text>\n<text id=\"unzoom\" class=\"btn\" x=\"%d\" y=\"22\" "
		"style=\"opacity:0.3\">Reset Zoom</text>\n<text id=\"search\" class=\"btn\" x=\"%u\" "
		"y=\"22\" text-anchor=\"end\">Search</text>\n<text id=\"matched\" x=\"%u\" y=\"%u\" "
		"text-anchor=\"end\"> </text>\n<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
		PAD, t->width - PAD, t->width - PAD, h - 7, PAD, h - 7);
	for (i = 0; i < t->n; i++)
		write_frame(out, t, &t->f[i], o);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n", script);
	return ferror(out) ? -1 : 0;
}
