/*
 * record.c - the bodies of non-sample records, and the sample_id trailer
 * that sample_id_all appends to kernel records:
 *
 *   { u32 pid, tid } { u64 time } { u64 id } { u64 stream_id }
 *   { u32 cpu, res } { u64 identifier }	(each when in sample_type)
 */
#include <string.h>

#include "cursor.h"
#include "pdfile.h"
#include "perr.h"

/* Kernel record types that carry the trailer (all but SAMPLE). */
static int is_kernel_type(uint32_t t)
{
	return t >= 1 && t < 64 && t != PD_RECORD_SAMPLE;
}

static size_t trailer_size(uint64_t st)
{
	size_t n = 0;

	n += !!(st & PD_SAMPLE_TID);
	n += !!(st & PD_SAMPLE_TIME);
	n += !!(st & PD_SAMPLE_ID);
	n += !!(st & PD_SAMPLE_STREAM_ID);
	n += !!(st & PD_SAMPLE_CPU);
	n += !!(st & PD_SAMPLE_IDENTIFIER);
	return n * 8;
}

/* Returns the trailer's size (0 when absent). */
static size_t decode_trailer(pd_file *f, const uint8_t *rec, uint32_t size, pd_record *r)
{
	const pd_event *ev;
	uint64_t st;
	size_t tsz;
	const uint8_t *p;
	pd_sample_id *id = &r->sample_id;

	if (!f->nr_events)
		return 0;
	ev = f->events[0];
	if (f->nr_events > 1 && f->is_pos > 0 && (uint64_t)f->is_pos * 8 + 8 <= size) {
		const pd_event *e2 = ev_by_id(f, load_u64(rec + size - 8 * f->is_pos, f->swap));

		if (e2)
			ev = e2;
	}
	if (!(ev->attr.flags & PD_ATTR_SAMPLE_ID_ALL))
		return 0;
	st = ev->attr.sample_type;
	tsz = trailer_size(st);
	if (!tsz || tsz + 8 > size)
		return 0;
	p = rec + size - tsz;
	memset(id, 0, sizeof(*id));
	id->fields = st & (PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_ID | PD_SAMPLE_STREAM_ID |
			   PD_SAMPLE_CPU | PD_SAMPLE_IDENTIFIER);
	if (st & PD_SAMPLE_TID) {
		id->pid = load_u32(p, f->swap);
		id->tid = load_u32(p + 4, f->swap);
		p += 8;
	}
	if (st & PD_SAMPLE_TIME) {
		id->time = load_u64(p, f->swap);
		p += 8;
	}
	if (st & PD_SAMPLE_ID) {
		id->id = load_u64(p, f->swap);
		p += 8;
	}
	if (st & PD_SAMPLE_STREAM_ID) {
		id->stream_id = load_u64(p, f->swap);
		p += 8;
	}
	if (st & PD_SAMPLE_CPU) {
		id->cpu = load_u32(p, f->swap);
		p += 8;
	}
	if (st & PD_SAMPLE_IDENTIFIER)
		id->identifier = load_u64(p, f->swap);
	r->has_sample_id = 1;
	return tsz;
}

/* A NUL-terminated string in [p, p+n): p itself, or a terminated copy. */
static const char *str_in(pd_file *f, const uint8_t *p, size_t n)
{
	return pd_string(f, p, n);
}

static void build_id_copy(uint8_t dst[20], const uint8_t *src)
{
	memcpy(dst, src, 20);
}

#define BAD(what) do { field = (what); goto bad; } while (0)

int record_decode(pd_file *f, const uint8_t *rec, uint32_t size, pd_record *r, pd_error *err)
{
	pd_cur c;
	size_t body;
	const char *field = "";
	int swap = f->swap;

	r->has_sample_id = 0;
	body = size;
	if (is_kernel_type(r->type))
		body -= decode_trailer(f, rec, size, r);
	cur_init(&c, rec + 8, body - 8, swap);

	switch (r->type) {
	case PD_RECORD_MMAP:
	case PD_RECORD_MMAP2: {
		pd_mmap *m = &r->u.mmap;
		const uint8_t *p;

		memset(m, 0, sizeof(*m));
		m->pid = cur_u32(&c);
		m->tid = cur_u32(&c);
		m->start = cur_u64(&c);
		m->len = cur_u64(&c);
		m->pgoff = cur_u64(&c);
		if (r->type == PD_RECORD_MMAP2) {
			p = cur_take(&c, 24);
			if (p && (r->misc & PD_MISC_MMAP_BUILD_ID)) {
				m->build_id_size = p[0] > 20 ? 20 : p[0];
				build_id_copy(m->build_id, p + 4);
			} else if (p) {
				m->maj = load_u32(p, swap);
				m->min = load_u32(p + 4, swap);
				m->ino = load_u64(p + 8, swap);
				m->ino_generation = load_u64(p + 16, swap);
			}
			m->prot = cur_u32(&c);
			m->flags = cur_u32(&c);
		}
		if (c.err)
			BAD("mmap fields");
		m->filename = str_in(f, c.buf + c.off, cur_left(&c));
		break;
	}
	case PD_RECORD_COMM:
		r->u.comm.pid = cur_u32(&c);
		r->u.comm.tid = cur_u32(&c);
		if (c.err)
			BAD("comm pid/tid");
		r->u.comm.comm = str_in(f, c.buf + c.off, cur_left(&c));
		r->u.comm.exec = !!(r->misc & PD_MISC_COMM_EXEC);
		break;
	case PD_RECORD_FORK:
	case PD_RECORD_EXIT:
		r->u.task.pid = cur_u32(&c);
		r->u.task.ppid = cur_u32(&c);
		r->u.task.tid = cur_u32(&c);
		r->u.task.ptid = cur_u32(&c);
		r->u.task.time = cur_u64(&c);
		if (c.err)
			BAD("fork/exit fields");
		break;
	case PD_RECORD_LOST:
		r->u.lost.id = cur_u64(&c);
		r->u.lost.lost = cur_u64(&c);
		if (c.err)
			BAD("lost fields");
		if (!f->quiet)
			f->stats.lost += r->u.lost.lost;
		break;
	case PD_RECORD_LOST_SAMPLES:
		r->u.lost.id = 0;
		r->u.lost.lost = cur_u64(&c);
		if (c.err)
			BAD("lost count");
		if (!f->quiet)
			f->stats.lost_samples += r->u.lost.lost;
		break;
	case PD_RECORD_KSYMBOL:
		r->u.ksymbol.addr = cur_u64(&c);
		r->u.ksymbol.len = cur_u32(&c);
		r->u.ksymbol.ksym_type = cur_u16(&c);
		r->u.ksymbol.flags = cur_u16(&c);
		if (c.err)
			BAD("ksymbol fields");
		r->u.ksymbol.name = str_in(f, c.buf + c.off, cur_left(&c));
		break;
	case PD_RECORD_BPF_EVENT: {
		const uint8_t *p;

		r->u.bpf_event.type = cur_u16(&c);
		r->u.bpf_event.flags = cur_u16(&c);
		r->u.bpf_event.id = cur_u32(&c);
		p = cur_take(&c, 8);
		if (!p)
			BAD("bpf event fields");
		memcpy(r->u.bpf_event.tag, p, 8);
		break;
	}
	case PD_RECORD_SWITCH:
	case PD_RECORD_SWITCH_CPU_WIDE:
		memset(&r->u.sw, 0, sizeof(r->u.sw));
		r->u.sw.out = !!(r->misc & PD_MISC_SWITCH_OUT);
		r->u.sw.preempt = !!(r->misc & (1 << 14));
		if (r->type == PD_RECORD_SWITCH_CPU_WIDE) {
			r->u.sw.next_prev_pid = cur_u32(&c);
			r->u.sw.next_prev_tid = cur_u32(&c);
			if (c.err)
				BAD("switch pid/tid");
		}
		break;
	case PD_RECORD_HEADER_BUILD_ID: {
		/* s32 pid; u8 build_id[24] (20 used, size in [20] when
		 * misc has BUILD_ID_SIZE); char filename[] */
		const uint8_t *p;
		pd_build_id *b = &r->u.build_id;

		memset(b, 0, sizeof(*b));
		b->pid = cur_u32(&c);
		p = cur_take(&c, 24);
		if (!p)
			BAD("build id");
		build_id_copy(b->build_id, p);
		b->misc = r->misc;
		b->size = (r->misc & (1 << 15)) && p[20] <= 20 ? p[20] : 20;
		b->filename = str_in(f, c.buf + c.off, cur_left(&c));
		break;
	}
	case PD_RECORD_AUXTRACE:
		r->u.auxtrace.size = cur_u64(&c);
		r->u.auxtrace.offset = cur_u64(&c);
		r->u.auxtrace.reference = cur_u64(&c);
		r->u.auxtrace.idx = cur_u32(&c);
		r->u.auxtrace.tid = cur_u32(&c);
		r->u.auxtrace.cpu = cur_u32(&c);
		if (c.err)
			BAD("auxtrace fields");
		break;
	default:
		break;	/* counted and passed on raw */
	}
	return 0;
bad:
	pd_set_error(err, PD_ERR_BAD_RECORD, r->offset, "%s record of %u bytes too short for its %s",
		     pd_record_name(r->type) ? pd_record_name(r->type) : "a", size, field);
	return -1;
}
