/* s3.c - S3 requests through libcurl (SigV4), streamed both ways. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "s3.h"
#include "s3xml.h"

/* CURLOPT_AWS_SIGV4 came with 7.75; 7.88 signs the x-amz-* headers we set */
#if LIBCURL_VERSION_NUM < 0x074b00
#error "libcurl 7.75 or later is needed (CURLOPT_AWS_SIGV4)"
#endif

#define S3_POOL_MAX 16		/* idle curl handles kept (their connections too) */
#define S3_TRIES 3		/* a request that failed on the way is sent again */
#define S3_RETRY_MS 250		/* first pause between tries, doubled each time */
#define S3_MAX_ETAG 128
#define S3_MAX_UPLOAD_ID 1024
#define S3_MAX_LIST_PAGES 1000000	/* a listing this long is a looping store */
#define S3_STALL_BYTES_PER_S 1024L
#define S3_HEX_SHA256 64

struct s3_client {
	char *endpoint;		/* "http://host:port", no trailing '/' */
	char *bucket, *prefix;	/* prefix "" or "a/b" (no '/' at either end) */
	char *access_key, *secret_key, *session_token;
	char sigv4[160];	/* "aws:amz:REGION:s3" */
	uint64_t part_size;
	long connect_timeout_s, stall_timeout_s;
	unsigned list_page;
	pthread_mutex_t lock;
	CURL *idle[S3_POOL_MAX];
	size_t nr_idle;
};

struct s3_multipart {
	s3_client *c;
	char *key;
	char *upload_id;
	char (*etags)[S3_MAX_ETAG];
	unsigned nr, cap;
};

/* One request: what goes out, and where the answer goes. */
typedef struct s3_req {
	const char *method;		/* GET, HEAD, PUT, POST, DELETE */
	const char *key;		/* NULL: the bucket */
	const char *query;		/* sorted and encoded, or NULL */
	int body_fd;			/* PUT: bytes [body_off, +body_len) of a file */
	uint64_t body_off, body_len;
	const char *body_mem;		/* POST: a small body in memory */
	size_t body_mem_len;
	const char *payload_sha256;	/* NULL: UNSIGNED-PAYLOAD */
	s3_sink sink;			/* body of a 2xx answer */
	void *sink_ctx;
	uint64_t max;
	const char *const *xml_names;	/* or: a 2xx answer read as XML, these */
	s3x_element_cb xml_cb;		/* elements to xml_cb (may be NULL) */
	void *xml_ctx;
	/* OUT */
	long status;
	uint64_t got;			/* bytes handed to the sink */
	char etag[S3_MAX_ETAG];
	char root[64];			/* root element of a 2xx XML answer */
	int64_t length;			/* Content-Length of the answer, -1: none */
} s3_req;

/* The transfer in flight. */
typedef struct xfer {
	s3_req *req;
	CURL *h;
	uint64_t sent;
	s3x_reader *xml;	/* the 2xx answer's reader, or the error's */
	int xml_is_error;
	int cut;		/* an error answer's body was cut short */
	char code[128], message[512];
	const char *why;	/* we stopped it: why */
} xfer;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_ready;

static void curl_setup(void)
{
	curl_ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

static char *env_or(const char *given, const char *name)
{
	const char *v = given ? given : getenv(name);

	return v && *v ? strdup(v) : NULL;
}

/* A key or prefix segment list: printable, no empty, "." or ".." part. */
static int path_ok(const char *s, size_t max)
{
	const char *seg = s;
	size_t n = strlen(s), i;

	if (!n || n > max)
		return 0;
	for (i = 0; i <= n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '/' || ch == 0) {
			size_t len = (size_t)(s + i - seg);

			if (!len || (len == 1 && seg[0] == '.') ||
			    (len == 2 && seg[0] == '.' && seg[1] == '.'))
				return 0;
			seg = s + i + 1;
			continue;
		}
		if (ch < 0x20 || ch == 0x7f)
			return 0;
	}
	return 1;
}

int s3_key_valid(const s3_client *c, const char *key)
{
	size_t pre = strlen(c->prefix);

	if (!key || pre + 1 >= S3_MAX_KEY)
		return 0;
	return path_ok(key, S3_MAX_KEY - (pre ? pre + 1 : 0));
}

/* "s3://BUCKET[/PREFIX]": bucket names as S3 allows them (3..63 of a-z,
 * 0-9, '.', '-'); the prefix loses its '/' at either end. */
static int parse_url(s3_client *c, const char *url, char *err, size_t errlen)
{
	const char *b, *slash;
	size_t blen, i;
	char *prefix;

	if (!url || strncmp(url, "s3://", 5)) {
		snprintf(err, errlen, "s3: the spool URL must look like s3://BUCKET/PREFIX");
		return -1;
	}
	b = url + 5;
	slash = strchr(b, '/');
	blen = slash ? (size_t)(slash - b) : strlen(b);
	if (blen < 3 || blen > 63) {
		snprintf(err, errlen, "s3: bucket name in %s must be 3 to 63 characters", url);
		return -1;
	}
	for (i = 0; i < blen; i++)
		if (!((b[i] >= 'a' && b[i] <= 'z') || (b[i] >= '0' && b[i] <= '9') ||
		      b[i] == '.' || b[i] == '-')) {
			snprintf(err, errlen, "s3: bucket name in %s may hold a-z, 0-9, '.' and '-' only",
				 url);
			return -1;
		}
	c->bucket = strndup(b, blen);
	prefix = strdup(slash ? slash + 1 : "");
	if (!c->bucket || !prefix) {
		free(prefix);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = strlen(prefix); i > 0 && prefix[i - 1] == '/'; i--)
		prefix[i - 1] = 0;
	c->prefix = prefix;
	if (*prefix && !path_ok(prefix, S3_MAX_KEY / 2)) {
		snprintf(err, errlen, "s3: prefix in %s is not a plain path of up to %d bytes", url,
			 S3_MAX_KEY / 2);
		return -1;
	}
	return 0;
}

s3_client *s3_open(const s3_config *cfg, char *err, size_t errlen)
{
	s3_client *c = calloc(1, sizeof(*c));
	char *region = NULL;
	size_t n;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	pthread_once(&curl_once, curl_setup);
	if (!curl_ready) {
		snprintf(err, errlen, "s3: libcurl did not initialise");
		goto fail;
	}
	if (parse_url(c, cfg->url, err, errlen) < 0)
		goto fail;
	if (!cfg->endpoint || (strncmp(cfg->endpoint, "http://", 7) &&
			       strncmp(cfg->endpoint, "https://", 8))) {
		snprintf(err, errlen, "s3: --s3-endpoint must be an http:// or https:// URL");
		goto fail;
	}
	c->endpoint = strdup(cfg->endpoint);
	if (!c->endpoint)
		goto oom;
	for (n = strlen(c->endpoint); n > 0 && c->endpoint[n - 1] == '/'; n--)
		c->endpoint[n - 1] = 0;
	if (strchr(c->endpoint + 8, '?') || strchr(c->endpoint + 8, '#')) {
		snprintf(err, errlen, "s3: the endpoint %s must not hold a query", c->endpoint);
		goto fail;
	}
	c->access_key = env_or(cfg->access_key, "AWS_ACCESS_KEY_ID");
	c->secret_key = env_or(cfg->secret_key, "AWS_SECRET_ACCESS_KEY");
	c->session_token = env_or(cfg->session_token, "AWS_SESSION_TOKEN");
	region = env_or(cfg->region, "AWS_REGION");
	if (!c->access_key || !c->secret_key) {
		snprintf(err, errlen, "s3: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set");
		goto fail;
	}
	if (strchr(c->access_key, ':') || strchr(c->access_key, '\n') ||
	    (c->session_token && strpbrk(c->session_token, "\r\n"))) {
		snprintf(err, errlen, "s3: AWS_ACCESS_KEY_ID or AWS_SESSION_TOKEN holds a ':' or a line break");
		goto fail;
	}
	if (region && (strlen(region) > 64 || strpbrk(region, ":/ \t\r\n"))) {
		snprintf(err, errlen, "s3: AWS_REGION is not a region name");
		goto fail;
	}
	snprintf(c->sigv4, sizeof(c->sigv4), "aws:amz:%s:s3", region ? region : "us-east-1");
	c->part_size = cfg->part_size ? cfg->part_size : S3_PART_DEFAULT;
	if (c->part_size < S3_PART_MIN) {
		snprintf(err, errlen, "s3: the part size must be at least %" PRIu64 " bytes",
			 S3_PART_MIN);
		goto fail;
	}
	c->list_page = cfg->list_page && cfg->list_page <= 1000 ? cfg->list_page : 1000;
	c->connect_timeout_s = cfg->connect_timeout_s > 0 ? cfg->connect_timeout_s : 10;
	c->stall_timeout_s = cfg->stall_timeout_s > 0 ? cfg->stall_timeout_s : 30;
	free(region);
	return c;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	free(region);
	s3_close(c);
	return NULL;
}

void s3_close(s3_client *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nr_idle; i++)
		curl_easy_cleanup(c->idle[i]);
	pthread_mutex_destroy(&c->lock);
	free(c->endpoint);
	free(c->bucket);
	free(c->prefix);
	free(c->access_key);
	free(c->secret_key);
	free(c->session_token);
	free(c);
}

static CURL *handle_get(s3_client *c)
{
	CURL *h = NULL;

	pthread_mutex_lock(&c->lock);
	if (c->nr_idle)
		h = c->idle[--c->nr_idle];
	pthread_mutex_unlock(&c->lock);
	return h ? h : curl_easy_init();
}

/* Back to the pool: its options are reset, its live connection is kept. */
static void handle_put(s3_client *c, CURL *h)
{
	curl_easy_reset(h);
	pthread_mutex_lock(&c->lock);
	if (c->nr_idle < S3_POOL_MAX) {
		c->idle[c->nr_idle++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&c->lock);
	if (h)
		curl_easy_cleanup(h);
}

/* ---- URLs --------------------------------------------------------------- */

/* Percent-encodes what SigV4's canonical URI would: all but A-Z a-z 0-9
 * - . _ ~ (and '/' where keep_slash). NULL when it does not fit. */
static char *uri_encode(char *out, size_t outlen, const char *s, int keep_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		int plain = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
			    (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_' ||
			    ch == '~' || (keep_slash && ch == '/');

		if (o + (plain ? 1 : 3) >= outlen)
			return NULL;
		if (plain) {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = 0;
	return out;
}

/* ENDPOINT/BUCKET[/PREFIX/KEY][?QUERY], malloc'ed. */
static char *make_url(const s3_client *c, const char *key, const char *query)
{
	char full[S3_MAX_KEY + 2], enc[3 * (S3_MAX_KEY + 2) + 1];
	size_t n;
	char *url;

	if (key)
		snprintf(full, sizeof(full), "%s%s%s", c->prefix, *c->prefix ? "/" : "", key);
	if (key && !uri_encode(enc, sizeof(enc), full, 1))
		return NULL;
	n = strlen(c->endpoint) + strlen(c->bucket) + (key ? strlen(enc) : 0) +
	    (query ? strlen(query) : 0) + 4;
	url = malloc(n);
	if (url)
		snprintf(url, n, "%s/%s%s%s%s%s", c->endpoint, c->bucket, key ? "/" : "",
			 key ? enc : "", query ? "?" : "", query ? query : "");
	return url;
}

/* ---- one request ---------------------------------------------------------- */

/* Every element of an answer comes here: <Code> and <Message> under the
 * root (an <Error>, even in a 2xx answer) are kept, and the elements the
 * request listed go on to its reader. */
static int on_element(void *ctx, const char *name, const char *text, size_t len, int depth)
{
	xfer *x = ctx;
	const s3_req *r = x->req;
	const char *const *n;

	if (depth == 2 && !strcmp(name, "Code"))
		snprintf(x->code, sizeof(x->code), "%s", text);
	else if (depth == 2 && !strcmp(name, "Message"))
		snprintf(x->message, sizeof(x->message), "%s", text);
	if (x->xml_is_error || !r->xml_cb)
		return 0;
	for (n = r->xml_names; *n; n++)
		if (!strcmp(*n, name))
			return r->xml_cb(r->xml_ctx, name, text, len, depth);
	return 0;
}

static long status_of(xfer *x)
{
	if (!x->req->status)
		curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &x->req->status);
	return x->req->status;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
	xfer *x = ud;
	s3_req *r = x->req;
	size_t len = size * nmemb;
	long st = status_of(x);

	if (st >= 200 && st < 300 && r->sink) {
		if (len > r->max - r->got) {
			x->why = "the object is larger than allowed";
			return 0;
		}
		if (r->sink(r->sink_ctx, data, len) != 0) {
			x->why = "the object's reader stopped";
			return 0;
		}
		r->got += len;
		return len;
	}
	if (!x->xml) {
		int is_error = !(st >= 200 && st < 300);

		if (!is_error && !r->xml_names)
			return len;	/* an answer nobody reads (PUT, DELETE) */
		/* a 2xx answer may still be an <Error> (CompleteMultipartUpload) */
		x->xml = s3x_new(NULL, on_element, x);
		x->xml_is_error = is_error;
		if (!x->xml) {
			x->why = "out of memory";
			return 0;
		}
	}
	if (s3x_feed(x->xml, data, len, 0) < 0) {
		if (!x->xml_is_error) {
			x->why = s3x_error(x->xml);
			return 0;
		}
		/* an error body that is not XML (or endless): the status tells */
		x->cut = 1;
		return 0;
	}
	return len;
}

static size_t on_header(char *line, size_t size, size_t nmemb, void *ud)
{
	xfer *x = ud;
	size_t len = size * nmemb, n;
	const char *v;

	if (len < 6 || strncasecmp(line, "etag:", 5))
		return len;
	v = line + 5;
	n = len - 5;
	while (n && (*v == ' ' || *v == '\t')) {
		v++;
		n--;
	}
	while (n && (v[n - 1] == '\r' || v[n - 1] == '\n' || v[n - 1] == ' '))
		n--;
	if (n < sizeof(x->req->etag)) {
		memcpy(x->req->etag, v, n);
		x->req->etag[n] = 0;
	}
	return len;
}

static size_t on_read(char *buf, size_t size, size_t nmemb, void *ud)
{
	xfer *x = ud;
	s3_req *r = x->req;
	size_t want = size * nmemb;
	ssize_t n;

	if (want > r->body_len - x->sent)
		want = (size_t)(r->body_len - x->sent);
	if (!want)
		return 0;
	do
		n = pread(r->body_fd, buf, want, (off_t)(r->body_off + x->sent));
	while (n < 0 && errno == EINTR);
	if (n <= 0) {
		x->why = n < 0 ? "reading the file to upload failed" : "the file to upload shrank";
		return CURL_READFUNC_ABORT;
	}
	x->sent += (uint64_t)n;
	return (size_t)n;
}

/* curl rewinds the body when it must send it again (a redirect, a retry) */
static int on_seek(void *ud, curl_off_t offset, int origin)
{
	xfer *x = ud;

	if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > x->req->body_len)
		return CURL_SEEKFUNC_CANTSEEK;
	x->sent = (uint64_t)offset;
	return CURL_SEEKFUNC_OK;
}

static int retryable(CURLcode cc, long status)
{
	if (cc == CURLE_OK)
		return status == 500 || status == 502 || status == 503 || status == 504;
	return cc == CURLE_COULDNT_CONNECT || cc == CURLE_SEND_ERROR || cc == CURLE_RECV_ERROR ||
	       cc == CURLE_GOT_NOTHING || cc == CURLE_PARTIAL_FILE ||
	       cc == CURLE_OPERATION_TIMEDOUT;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int setup(s3_client *c, CURL *h, xfer *x, const char *url, struct curl_slist **hdrs)
{
	s3_req *r = x->req;
	char line[S3_HEX_SHA256 + 64];
	struct curl_slist *l = NULL, *t;

	snprintf(line, sizeof(line), "x-amz-content-sha256: %s",
		 r->payload_sha256 ? r->payload_sha256 : "UNSIGNED-PAYLOAD");
	l = curl_slist_append(l, line);
	if (l && c->session_token) {
		char *tok = malloc(strlen(c->session_token) + 32);

		if (!tok)
			goto oom;
		sprintf(tok, "x-amz-security-token: %s", c->session_token);
		t = curl_slist_append(l, tok);
		free(tok);
		if (!t)
			goto oom;
	}
	if (l && r->body_mem && !(t = curl_slist_append(l, "Content-Type: application/xml")))
		goto oom;
	if (!l)
		goto oom;
	*hdrs = l;
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, l);
	curl_easy_setopt(h, CURLOPT_AWS_SIGV4, c->sigv4);
	curl_easy_setopt(h, CURLOPT_USERNAME, c->access_key);
	curl_easy_setopt(h, CURLOPT_PASSWORD, c->secret_key);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, c->connect_timeout_s);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, S3_STALL_BYTES_PER_S);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, c->stall_timeout_s);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	if (!strcmp(r->method, "HEAD")) {
		curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(r->method, "PUT")) {
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)r->body_len);
		curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(h, CURLOPT_READDATA, x);
		curl_easy_setopt(h, CURLOPT_SEEKFUNCTION, on_seek);
		curl_easy_setopt(h, CURLOPT_SEEKDATA, x);
	} else if (!strcmp(r->method, "POST")) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body_mem ? r->body_mem : "");
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_mem_len);
	} else if (strcmp(r->method, "GET")) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, r->method);
	}
	return 0;
oom:
	curl_slist_free_all(l);
	return -1;
}

/* Sends r (again after a passing failure, while no byte reached a sink).
 * S3_OK on a 2xx answer, S3_NOT_FOUND on 404, else S3_ERR with err set. */
static int perform(s3_client *c, s3_req *r, char *err, size_t errlen)
{
	const char *what = r->key ? r->key : "(bucket)";
	char *url = make_url(c, r->key, r->query);
	long pause = S3_RETRY_MS;
	int tries, rc = S3_ERR;

	if (!url) {
		snprintf(err, errlen, "s3 %s %s: key too long", r->method, what);
		return S3_ERR;
	}
	for (tries = 1;; tries++) {
		struct curl_slist *hdrs = NULL;
		CURL *h = handle_get(c);
		xfer x = { .req = r, .h = h };
		curl_off_t length;
		CURLcode cc;

		r->status = 0;
		r->etag[0] = 0;
		r->root[0] = 0;
		if (!h || setup(c, h, &x, url, &hdrs) < 0) {
			if (h)
				curl_easy_cleanup(h);
			snprintf(err, errlen, "s3 %s %s: out of memory", r->method, what);
			break;
		}
		cc = curl_easy_perform(h);
		status_of(&x);
		if (curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) != CURLE_OK)
			length = -1;
		r->length = length;
		if (cc == CURLE_WRITE_ERROR && x.cut)
			cc = CURLE_OK;
		if (x.xml && cc == CURLE_OK && s3x_feed(x.xml, "", 0, 1) < 0 && !x.xml_is_error) {
			x.why = s3x_error(x.xml);
		}
		if (x.xml && !x.xml_is_error)
			snprintf(r->root, sizeof(r->root), "%s", s3x_root(x.xml));
		curl_slist_free_all(hdrs);
		handle_put(c, h);
		if (x.why) {
			snprintf(err, errlen, "s3 %s %s: %s", r->method, what, x.why);
		} else if (cc != CURLE_OK) {
			snprintf(err, errlen, "s3 %s %s: %s (curl %d)", r->method, what,
				 curl_easy_strerror(cc), (int)cc);
		} else if (r->status >= 200 && r->status < 300 && !strcmp(r->root, "Error")) {
			snprintf(err, errlen, "s3 %s %s: HTTP %ld but %s%s%s", r->method, what,
				 r->status, x.code[0] ? x.code : "Error", x.message[0] ? ": " : "",
				 x.message);
		} else if (r->status >= 200 && r->status < 300) {
			rc = S3_OK;
		} else if (r->status == 404) {
			snprintf(err, errlen, "s3 %s %s: HTTP 404 %s", r->method, what,
				 x.code[0] ? x.code : "Not Found");
			rc = S3_NOT_FOUND;
		} else {
			snprintf(err, errlen, "s3 %s %s: HTTP %ld%s%s%s%s", r->method, what, r->status,
				 x.code[0] ? " " : "", x.code, x.message[0] ? ": " : "", x.message);
		}
		s3x_free(x.xml);
		if (rc != S3_ERR || x.why || tries >= S3_TRIES || r->got ||
		    !retryable(cc, r->status))
			break;
		pause_ms(pause);
		pause *= 2;
	}
	free(url);
	return rc;
}

/* ---- objects ---------------------------------------------------------- */

static int put_single(s3_client *c, const char *key, int fd, uint64_t size,
		      const char *sha256_hex, char *err, size_t errlen)
{
	s3_req r = { .method = "PUT", .key = key, .body_fd = fd, .body_len = size,
		     .payload_sha256 = sha256_hex };

	return perform(c, &r, err, errlen) == S3_OK ? S3_OK : S3_ERR;
}

static int put_multipart(s3_client *c, const char *key, int fd, uint64_t size, char *err,
			 size_t errlen)
{
	uint64_t part = c->part_size, off;
	s3_multipart *m;
	char ignored[128];

	/* S3 takes at most S3_MAX_PARTS parts: larger parts for huge files */
	if (size / part >= S3_MAX_PARTS)
		part = size / (S3_MAX_PARTS - 1);
	m = s3_mpu_begin(c, key, err, errlen);
	if (!m)
		return S3_ERR;
	for (off = 0; off < size; off += part) {
		uint64_t len = size - off < part ? size - off : part;

		if (s3_mpu_part(m, fd, off, len, err, errlen) != S3_OK) {
			s3_mpu_abort(m, ignored, sizeof(ignored));
			return S3_ERR;
		}
	}
	return s3_mpu_complete(m, err, errlen);
}

int s3_put_file(s3_client *c, const char *key, const char *path, const char *sha256_hex,
		char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;
	size_t i;

	if (!s3_key_valid(c, key)) {
		snprintf(err, errlen, "s3 PUT: invalid key \"%.64s\"", key ? key : "");
		return S3_ERR;
	}
	if (sha256_hex) {
		for (i = 0; sha256_hex[i] && strchr("0123456789abcdef", sha256_hex[i]); i++)
			;
		if (i != S3_HEX_SHA256 || sha256_hex[i]) {
			snprintf(err, errlen, "s3 PUT %s: the SHA-256 is not 64 lowercase hex digits",
				 key);
			return S3_ERR;
		}
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "s3 PUT %s: %s: %s", key, path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return S3_ERR;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "s3 PUT %s: %s: not a regular file", key, path);
		close(fd);
		return S3_ERR;
	}
	if ((uint64_t)st.st_size >= c->part_size)
		rc = put_multipart(c, key, fd, (uint64_t)st.st_size, err, errlen);
	else
		rc = put_single(c, key, fd, (uint64_t)st.st_size, sha256_hex, err, errlen);
	close(fd);
	return rc;
}

int s3_get(s3_client *c, const char *key, uint64_t max, s3_sink sink, void *ctx,
	   uint64_t *size, char *err, size_t errlen)
{
	s3_req r = { .method = "GET", .key = key, .sink = sink, .sink_ctx = ctx, .max = max };
	int rc;

	if (!s3_key_valid(c, key)) {
		snprintf(err, errlen, "s3 GET: invalid key \"%.64s\"", key ? key : "");
		return S3_ERR;
	}
	rc = perform(c, &r, err, errlen);
	if (size)
		*size = r.got;
	return rc;
}

static int to_fd(void *ctx, const void *data, size_t len)
{
	const char *p = data;
	int fd = *(int *)ctx;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int s3_get_file(s3_client *c, const char *key, const char *path, uint64_t max, uint64_t *size,
		char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	int rc;

	if (fd < 0) {
		snprintf(err, errlen, "s3 GET %s: %s: %s", key, path, strerror(errno));
		return S3_ERR;
	}
	rc = s3_get(c, key, max, to_fd, &fd, size, err, errlen);
	if (close(fd) < 0 && rc == S3_OK) {
		snprintf(err, errlen, "s3 GET %s: %s: %s", key, path, strerror(errno));
		rc = S3_ERR;
	}
	if (rc != S3_OK)
		unlink(path);
	return rc;
}

int s3_head(s3_client *c, const char *key, uint64_t *size, char *err, size_t errlen)
{
	s3_req r = { .method = "HEAD", .key = key };
	int rc;

	if (!s3_key_valid(c, key)) {
		snprintf(err, errlen, "s3 HEAD: invalid key \"%.64s\"", key ? key : "");
		return S3_ERR;
	}
	rc = perform(c, &r, err, errlen);
	if (rc == S3_OK && r.length < 0) {
		snprintf(err, errlen, "s3 HEAD %s: the answer has no Content-Length", key);
		return S3_ERR;
	}
	if (rc == S3_OK && size)
		*size = (uint64_t)r.length;
	return rc;
}

int s3_delete(s3_client *c, const char *key, char *err, size_t errlen)
{
	s3_req r = { .method = "DELETE", .key = key };
	int rc;

	if (!s3_key_valid(c, key)) {
		snprintf(err, errlen, "s3 DELETE: invalid key \"%.64s\"", key ? key : "");
		return S3_ERR;
	}
	rc = perform(c, &r, err, errlen);
	return rc == S3_NOT_FOUND ? S3_OK : rc;
}

/* ---- listing ------------------------------------------------------------ */

typedef struct list_state {
	const s3_client *c;
	s3_list_cb cb;
	void *ctx;
	char key[S3X_MAX_TEXT + 1];
	uint64_t size;
	int have_key, have_size, truncated, stopped;
	char next[S3X_MAX_TEXT + 1];
	const char *bad;	/* the answer made no sense: why */
} list_state;

static const char *const list_names[] = {
	"Contents", "Key", "Size", "IsTruncated", "NextContinuationToken", NULL
};

static int on_list_element(void *ctx, const char *name, const char *text, size_t len, int depth)
{
	list_state *ls = ctx;
	size_t pre = strlen(ls->c->prefix);

	if (!strcmp(name, "IsTruncated") && depth == 2) {
		ls->truncated = !strcmp(text, "true");
	} else if (!strcmp(name, "NextContinuationToken") && depth == 2) {
		snprintf(ls->next, sizeof(ls->next), "%s", text);
	} else if (!strcmp(name, "Key") && depth == 3) {
		if (len >= S3X_MAX_TEXT || memchr(text, 0, len)) {
			ls->bad = "a listed key is too long";
			return -1;
		}
		memcpy(ls->key, text, len + 1);
		ls->have_key = 1;
	} else if (!strcmp(name, "Size") && depth == 3) {
		char *end;

		errno = 0;
		ls->size = strtoull(text, &end, 10);
		if (!len || *end || errno || text[0] == '-') {
			ls->bad = "a listed size is not a number";
			return -1;
		}
		ls->have_size = 1;
	} else if (!strcmp(name, "Contents") && depth == 2) {
		const char *rel = ls->key;

		if (!ls->have_key || !ls->have_size) {
			ls->bad = "a listed object has no Key or Size";
			return -1;
		}
		ls->have_key = ls->have_size = 0;
		/* the store lists the full key; we hand out what follows the prefix */
		if (pre) {
			if (strncmp(rel, ls->c->prefix, pre) || rel[pre] != '/') {
				ls->bad = "a listed key is outside the prefix";
				return -1;
			}
			rel += pre + 1;
		}
		if (!ls->stopped && ls->cb(ls->ctx, rel, ls->size) != 0)
			ls->stopped = 1;
	}
	return 0;
}

int s3_list(s3_client *c, const char *key_prefix, s3_list_cb cb, void *ctx, char *err,
	    size_t errlen)
{
	char full[S3_MAX_KEY + 2], enc_prefix[3 * (S3_MAX_KEY + 2) + 1];
	char enc_token[3 * S3X_MAX_TEXT + 1], token[S3X_MAX_TEXT + 1] = "";
	char *query = NULL;
	unsigned long pages;
	int rc = S3_ERR;

	snprintf(full, sizeof(full), "%s%s%s", c->prefix, *c->prefix ? "/" : "", key_prefix);
	if (strlen(full) >= S3_MAX_KEY || !uri_encode(enc_prefix, sizeof(enc_prefix), full, 0)) {
		snprintf(err, errlen, "s3 LIST: prefix too long");
		return S3_ERR;
	}
	for (pages = 0; pages < S3_MAX_LIST_PAGES; pages++) {
		list_state ls = { .c = c, .cb = cb, .ctx = ctx };
		s3_req r = { .method = "GET", .xml_names = list_names, .xml_cb = on_list_element,
			     .xml_ctx = &ls };
		size_t n;

		if (!uri_encode(enc_token, sizeof(enc_token), token, 0))
			goto out;
		/* SigV4 wants the parameters sorted by name */
		n = strlen(enc_token) + strlen(enc_prefix) + 96;
		free(query);
		query = malloc(n);
		if (!query) {
			snprintf(err, errlen, "s3 LIST: out of memory");
			goto out;
		}
		snprintf(query, n, "%s%s%slist-type=2&max-keys=%u&prefix=%s",
			 *token ? "continuation-token=" : "", enc_token, *token ? "&" : "",
			 c->list_page, enc_prefix);
		r.query = query;
		rc = perform(c, &r, err, errlen);
		if (ls.bad) {
			snprintf(err, errlen, "s3 LIST %s: %s", full, ls.bad);
			rc = S3_ERR;
		} else if (rc == S3_OK && strcmp(r.root, "ListBucketResult")) {
			snprintf(err, errlen, "s3 LIST %s: the answer is <%s>, not <ListBucketResult>",
				 full, r.root);
			rc = S3_ERR;
		}
		if (rc != S3_OK || ls.stopped || !ls.truncated)
			goto out;
		if (!ls.next[0] || !strcmp(ls.next, token)) {
			snprintf(err, errlen, "s3 LIST %s: a truncated page without a new "
				 "NextContinuationToken", full);
			rc = S3_ERR;
			goto out;
		}
		memcpy(token, ls.next, sizeof(token));
	}
	snprintf(err, errlen, "s3 LIST %s: more than %d pages", full, S3_MAX_LIST_PAGES);
	rc = S3_ERR;
out:
	free(query);
	return rc;
}

/* ---- multipart uploads ---------------------------------------------------- */

static const char *const initiate_names[] = { "UploadId", NULL };

static int on_upload_id(void *ctx, const char *name, const char *text, size_t len, int depth)
{
	char **id = ctx;

	(void)name;
	if (depth != 2 || !len || len > S3_MAX_UPLOAD_ID || memchr(text, 0, len))
		return depth == 2 ? -1 : 0;
	free(*id);
	*id = strdup(text);
	return *id ? 0 : -1;
}

s3_multipart *s3_mpu_begin(s3_client *c, const char *key, char *err, size_t errlen)
{
	s3_multipart *m;
	char *id = NULL;
	s3_req r = { .method = "POST", .key = key, .query = "uploads=",
		     .xml_names = initiate_names, .xml_cb = on_upload_id, .xml_ctx = &id };

	if (!s3_key_valid(c, key)) {
		snprintf(err, errlen, "s3 POST: invalid key \"%.64s\"", key ? key : "");
		return NULL;
	}
	if (perform(c, &r, err, errlen) != S3_OK)
		goto fail;
	if (!id || strcmp(r.root, "InitiateMultipartUploadResult")) {
		snprintf(err, errlen, "s3 POST %s?uploads: the answer has no UploadId", key);
		goto fail;
	}
	m = calloc(1, sizeof(*m));
	if (!m || !(m->key = strdup(key))) {
		free(m);
		snprintf(err, errlen, "s3 POST %s?uploads: out of memory", key);
		goto fail;
	}
	m->c = c;
	m->upload_id = id;
	return m;
fail:
	free(id);
	return NULL;
}

const char *s3_mpu_id(const s3_multipart *m)
{
	return m->upload_id;
}

/* "partNumber=N&uploadId=ID" or "uploadId=ID", malloc'ed. */
static char *mpu_query(const s3_multipart *m, unsigned part)
{
	char enc[3 * S3_MAX_UPLOAD_ID + 1], *q;
	size_t n;

	if (!uri_encode(enc, sizeof(enc), m->upload_id, 0))
		return NULL;
	n = strlen(enc) + 48;
	q = malloc(n);
	if (q && part)
		snprintf(q, n, "partNumber=%u&uploadId=%s", part, enc);
	else if (q)
		snprintf(q, n, "uploadId=%s", enc);
	return q;
}

int s3_mpu_part(s3_multipart *m, int fd, uint64_t offset, uint64_t len, char *err,
		size_t errlen)
{
	s3_req r = { .method = "PUT", .key = m->key, .body_fd = fd, .body_off = offset,
		     .body_len = len };
	char *q;
	int rc;

	if (m->nr >= S3_MAX_PARTS) {
		snprintf(err, errlen, "s3 PUT %s: more than %d parts", m->key, S3_MAX_PARTS);
		return S3_ERR;
	}
	if (m->nr == m->cap) {
		unsigned cap = m->cap ? 2 * m->cap : 16;
		void *p = realloc(m->etags, cap * sizeof(*m->etags));

		if (!p) {
			snprintf(err, errlen, "s3 PUT %s: out of memory", m->key);
			return S3_ERR;
		}
		m->etags = p;
		m->cap = cap;
	}
	q = mpu_query(m, m->nr + 1);
	if (!q) {
		snprintf(err, errlen, "s3 PUT %s: out of memory", m->key);
		return S3_ERR;
	}
	r.query = q;
	rc = perform(m->c, &r, err, errlen);
	free(q);
	if (rc != S3_OK)
		return S3_ERR;
	if (!r.etag[0] || strpbrk(r.etag, "<>&")) {
		snprintf(err, errlen, "s3 PUT %s part %u: the answer has no usable ETag", m->key,
			 m->nr + 1);
		return S3_ERR;
	}
	memcpy(m->etags[m->nr++], r.etag, sizeof(r.etag));
	return S3_OK;
}

static void mpu_free(s3_multipart *m)
{
	free(m->key);
	free(m->upload_id);
	free(m->etags);
	free(m);
}

static const char *const complete_names[] = { NULL };	/* the root is enough */

int s3_mpu_complete(s3_multipart *m, char *err, size_t errlen)
{
	static const char head[] = "<CompleteMultipartUpload>";
	static const char tail[] = "</CompleteMultipartUpload>";
	s3_req r = { .method = "POST", .key = m->key, .xml_names = complete_names };
	size_t cap = sizeof(head) + sizeof(tail) + (size_t)m->nr * (S3_MAX_ETAG + 80), o;
	char *body = malloc(cap), *q = mpu_query(m, 0);
	unsigned i;
	int rc = S3_ERR;

	if (!body || !q) {
		snprintf(err, errlen, "s3 POST %s?uploadId: out of memory", m->key);
		goto out;
	}
	if (!m->nr) {
		snprintf(err, errlen, "s3 POST %s?uploadId: no part was uploaded", m->key);
		goto out;
	}
	/* ETags hold no '<', '>' or '&' (checked as each part came back) */
	o = (size_t)snprintf(body, cap, "%s", head);
	for (i = 0; i < m->nr; i++)
		o += (size_t)snprintf(body + o, cap - o,
				      "<Part><PartNumber>%u</PartNumber><ETag>%s</ETag></Part>",
				      i + 1, m->etags[i]);
	o += (size_t)snprintf(body + o, cap - o, "%s", tail);
	r.query = q;
	r.body_mem = body;
	r.body_mem_len = o;
	rc = perform(m->c, &r, err, errlen);
	/* S3 may answer 200 and still fail: the body is an <Error> then */
	if (rc == S3_OK && strcmp(r.root, "CompleteMultipartUploadResult")) {
		snprintf(err, errlen, "s3 POST %s?uploadId: the answer is <%s>, not "
			 "<CompleteMultipartUploadResult>", m->key, r.root);
		rc = S3_ERR;
	}
	if (rc != S3_OK)
		rc = S3_ERR;
out:
	free(q);
	free(body);
	if (rc != S3_OK) {
		char ignored[128];

		s3_mpu_abort(m, ignored, sizeof(ignored));
		return S3_ERR;
	}
	mpu_free(m);
	return S3_OK;
}

int s3_mpu_abort(s3_multipart *m, char *err, size_t errlen)
{
	s3_req r = { .method = "DELETE", .key = m->key };
	char *q = mpu_query(m, 0);
	int rc = S3_ERR;

	if (!q) {
		snprintf(err, errlen, "s3 DELETE %s?uploadId: out of memory", m->key);
	} else {
		r.query = q;
		rc = perform(m->c, &r, err, errlen);
		free(q);
	}
	mpu_free(m);
	return rc == S3_OK ? S3_OK : S3_ERR;
}
