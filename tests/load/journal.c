/* The journal of every request mpload sent: one tab-separated line each (see journal.h). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "journal.h"

static FILE *out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int
journal_open(const char *path)
{
	if (path == NULL || strcmp(path, "-") == 0)
		return 0;
	if ((out = fopen(path, "a")) == NULL)
		return -1;
	return 0;
}

/* A field as written: "-" when empty, and never a tab or newline that would split it. */
static void
field(const char *s)
{
	if (s == NULL || *s == '\0') {
		fputc('-', out);
		return;
	}
	for (; *s != '\0'; s++)
		fputc(*s == '\t' || *s == '\n' || *s == '\r' || *s == '\\' ? '_' : *s, out);
}

void
journal_write(const struct journal_line *l)
{
	if (out == NULL)
		return;
	pthread_mutex_lock(&lock);
	fprintf(out, "%lld\t%s\t%ld\t%llu\t%d\t", (long long)l->start_ms, l->kind, l->status,
	    (unsigned long long)l->lat_us, l->attempt);
	field(l->key);
	fputc('\t', out);
	field(l->ids);
	fputc('\t', out);
	if (l->amount >= 0)
		fprintf(out, "%lld", (long long)l->amount);
	else
		fputc('-', out);
	fputc('\t', out);
	field(l->request_id);
	fputc('\t', out);
	field(l->note);
	if (l->lag_us >= 0)
		fprintf(out, "\t%lld\n", (long long)l->lag_us);
	else
		fputs("\t-\n", out);
	fflush(out);
	pthread_mutex_unlock(&lock);
}

void
journal_close(void)
{
	if (out != NULL)
		fclose(out);
	out = NULL;
}
