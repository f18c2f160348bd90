#ifndef MP_FUZZ_H
#define MP_FUZZ_H

/*
 * Shared by the libFuzzer targets in tests/fuzz (run by tests/fuzz.sh). A target checks
 * more than "no crash": each property it states with FUZZ_ASSERT stops the run with a
 * report and a reproducer, like a sanitizer finding.
 */

#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "app.h"
#include "req.h"

/* libFuzzer's entry points: fuzz.c has the first, each fuzz_<target>.c the second. */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The worker every target runs against: fuzz_app_init(&fuzz_app, CONFIG_SANDBOX) at start. */
extern struct app fuzz_app;

/* Aborts with file, line and the condition when c is false. */
#define FUZZ_ASSERT(c) ((c) ? (void)0 : fuzz_fail(__FILE__, __LINE__, #c))

void fuzz_fail(const char *file, int line, const char *what) __attribute__((noreturn));

/*
 * Fills app as a worker without a database would be: marketpay.conf defaults in env, a
 * database that is never there (libpq fails at once, db_run answers ERR_UNAVAILABLE), no
 * secrets, and logging to /dev/null. Aborts when the defaults do not load.
 */
void fuzz_app_init(struct app *app, enum config_env env);

/*
 * A NUL-terminated copy of len bytes, cut at the first NUL as a FastCGI parameter would
 * be. The caller frees it; aborts on ENOMEM.
 */
char *fuzz_str(const uint8_t *data, size_t len);

/*
 * The next field of the input: the bytes up to '\n' (or all that is left), as fuzz_str.
 * Advances *data and *left past the field and its '\n'.
 */
char *fuzz_field(const uint8_t **data, size_t *left);

/*
 * A request as fcgi.c makes one without Content-Length: method GET, path "/", an empty
 * query and no body (NULL). Every member is owned; req_free releases it. Aborts on ENOMEM.
 */
struct req *fuzz_req(void);

/*
 * Checks a response as a client would read it: a status 200..599, a body whose length
 * matches, header values without CR or LF, and for application/json a body that
 * json_parse_strict accepts as an object (so valid UTF-8 too).
 */
void fuzz_check_reply(const struct req *req);

/*
 * A request body as session_create and transfer_send parse it (json_parse_strict). On a
 * refusal checks the 400 reply (fuzz_check_fail) and returns NULL; otherwise the caller
 * frees the result with json_object_put.
 */
struct json_object *fuzz_parse(const uint8_t *data, size_t size);

/*
 * Replies msg as a handler does after a failed validation (req_fail 400 "%s") and checks
 * that reply: {"success": false, "message": a non-empty string}.
 */
void fuzz_check_fail(const char *msg);

#endif
