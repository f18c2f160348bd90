/* A JSON request body read through its endpoint's field table (body.h). */
#include <stdio.h>
#include <string.h>

#include "body.h"

bool
body_validate(const struct body_spec *spec, const struct config *cfg,
    struct json_object *root, void *in, char *msg, size_t msglen)
{
	memset(in, 0, spec->size);
	if (!json_object_is_type(root, json_type_object)) {
		snprintf(msg, msglen, "request body must be a JSON object");
		return false;
	}
	if (!valid_object(root, spec->fields, spec->nfields, "", cfg->max_amount, in, msg,
	    msglen))
		return false;
	return spec->check == NULL || spec->check(cfg, in, msg, msglen);
}
