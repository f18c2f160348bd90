#ifndef MP_BODY_H
#define MP_BODY_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "app.h"
#include "config.h"
#include "req.h"
#include "valid.h"

/*
 * What an endpoint's JSON body is read into, declared beside its handler and named in its
 * route row; the request pipeline (route.c) runs the stages in this order.
 */
struct body_spec {
	/* The top-level keys: valid_object() rules, offsets into the endpoint's input struct. */
	const struct valid_field *fields;
	size_t nfields;
	size_t size;       /* of the input struct; zeroed before the fields are read */
	/*
	 * The rules across fields and inside nested arrays, once the table passed; NULL = none.
	 * false with the field and rule in msg (a 400). Frees what it made when it fails.
	 */
	bool (*check)(const struct config *cfg, void *in, char *msg, size_t msglen);
	/*
	 * Work on the valid input before any transaction (decrypting, say); NULL = none. false
	 * when it answered req itself.
	 */
	bool (*open)(struct app *app, struct req *req, void *in);
	/* Releases what check and open left in the input (and wipes secrets); NULL = none. */
	void (*release)(void *in);
};

/*
 * Validates root against spec into in (spec->size bytes): a JSON object, the field table,
 * then spec->check. Returns true, or false with one message naming the field and the rule.
 */
bool body_validate(const struct body_spec *spec, const struct config *cfg,
    struct json_object *root, void *in, char *msg, size_t msglen);

#endif
