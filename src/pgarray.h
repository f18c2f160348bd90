#ifndef MP_PGARRAY_H
#define MP_PGARRAY_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A PostgreSQL array literal ({"a","b\"c"} or {1,2}) built element by element, to pass a
 * list as one text parameter: each text element double-quoted with its '"' and '\' escaped,
 * so any text without NUL round-trips exactly.
 */
struct pgarray {
	char *s;
	size_t len, cap;
	bool oom;
	int n;
};

void pgarray_init(struct pgarray *a);
/* text NULL adds a NULL element. */
void pgarray_add(struct pgarray *a, const char *text);
void pgarray_add_int(struct pgarray *a, long long v);
/* The literal, closed; NULL when memory ran out. Owned by a until pgarray_free. */
const char *pgarray_end(struct pgarray *a);
void pgarray_free(struct pgarray *a);

#endif
