/*
 * fuzz-replay - run the fuzz target's entry point over every file in
 * tests/fuzz-corpus/ (seeds and kept crash reproducers), or over the files
 * and directories given as arguments. A crash or sanitizer report fails
 * the test; otherwise it prints how many inputs it replayed.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path, unsigned long *n)
{
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		fprintf(stderr, "fuzz-replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + len, 1, cap - len, fp)) > 0) {
		len += got;
		if (len == cap) {
			uint8_t *p = realloc(buf, cap * 2);
			if (!p) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = p;
			cap *= 2;
		}
	}
	fclose(fp);
	if (!buf)
		return -1;
	/* an exact-size copy, so reads one past the end are caught */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	(*n)++;
	return 0;
}

static int replay(const char *path, unsigned long *n)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "fuzz-replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path, n);
	struct dirent **names;
	int nr = scandir(path, &names, NULL, alphasort);
	if (nr < 0) {
		fprintf(stderr, "fuzz-replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	int rc = 0;
	for (int i = 0; i < nr; i++) {
		char full[4096];
		if (names[i]->d_name[0] != '.') {
			snprintf(full, sizeof(full), "%s/%s", path, names[i]->d_name);
			if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && replay_file(full, n))
				rc = -1;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned long n = 0;
	int rc = 0;
	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			rc |= replay(argv[i], &n);
	} else {
		const char *top = getenv("top_srcdir");
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s/tests/fuzz-corpus", top ? top : ".");
		rc = replay(dir, &n);
	}
	printf("replayed %lu inputs\n", n);
	if (n == 0) {
		fprintf(stderr, "fuzz-replay: no inputs found\n");
		return 1;
	}
	return rc ? 1 : 0;
}
