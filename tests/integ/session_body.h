#ifndef MP_TEST_SESSION_BODY_H
#define MP_TEST_SESSION_BODY_H

#include <stddef.h>

/* create-session bodies with one field of merchant text chosen by the case (Check inside). */

/* The fields of a create-session body that carry merchant text. */
enum field { F_ID, F_NAME, F_USER, F_EMAIL, F_SUCCESS, F_FAILURE, F__MAX };

struct body_field {
	const char *json;   /* as named in the 400 message */
	const char *stored; /* SQL: the stored value, $1 = session id */
};

extern const struct body_field fields[F__MAX];

/*
 * A create-session body (caller frees) with ordinary values, except field f, which is the
 * len bytes of value (they may hold NUL; json-c writes it as \u0000). JSON escaping is
 * json-c's, so the server sees exactly value.
 */
char *body_with(enum field f, const char *value, size_t len);

#endif
