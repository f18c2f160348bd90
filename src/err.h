#ifndef MP_ERR_H
#define MP_ERR_H

/* One project-wide error code. err_http_status() maps it to the HTTP status a handler replies with. */
enum err {
	ERR_OK = 0,       /* success */
	ERR_INVALID,      /* input breaks a rule: 400 */
	ERR_AUTH,         /* credentials missing or wrong: 401 */
	ERR_NOTFOUND,     /* no such resource: 404 */
	ERR_METHOD,       /* path exists, method does not: 405 */
	ERR_CONFLICT,     /* idempotency key in flight: 409 */
	ERR_LENGTH,       /* Content-Length missing or malformed: 411 */
	ERR_TOOBIG,       /* body over the limit: 413 */
	ERR_MEDIA,        /* content type not application/json: 415 */
	ERR_MISMATCH,     /* idempotency key reused with another body: 422 */
	ERR_DB,           /* database failure: 500 */
	ERR_NOMEM,        /* allocation failed: 500 */
	ERR_INTERNAL,     /* anything else that is our fault: 500 */
	ERR_UNAVAILABLE,  /* database unreachable: 503 */
	ERR__MAX
};

/* The HTTP status for e; 500 for anything unknown. */
int err_http_status(enum err e);

/* The default message for e ("internal error", ...): static, never NULL. */
const char *err_message(enum err e);

/* The HTTP reason phrase for an HTTP status ("Bad Request"); never NULL. */
const char *err_reason(int status);

#endif
