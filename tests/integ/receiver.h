#ifndef MP_TEST_RECEIVER_H
#define MP_TEST_RECEIVER_H

#include <json-c/json.h>

/*
 * The stack's webhook receiver (tests/stack.sh): nginx logging each request it gets, headers
 * and exact body, as one JSON line in $MARKETPAY_STACK_DIR/webhooks.log.
 */

/* A path inside the stack's directory (one of four rotating static buffers). */
const char *stack_file(const char *name);

/* Milliseconds of the monotonic clock. */
long long now_ms(void);

/* The receiver's log lines for event id, oldest first (NULL-terminated; receiver_free). */
struct json_object **receiver_requests(const char *id, int *count);
void receiver_free(struct json_object **r);

/* The number of requests the receiver logged for id, waiting up to ms for want of them. */
int receiver_wait(const char *id, int want, long ms);

/* A string field of a log line ("" when absent). */
const char *receiver_field(struct json_object *o, const char *key);

/*
 * Verifies a logged request's webhook-signature the way a merchant does, from the whsec_
 * secret alone: 1 when one of its space-separated signatures is right.
 */
int receiver_signature_ok(const char *whsec, struct json_object *req);

/* 1 when sig ("v1,<base64>") is one of the space-separated signatures of header. */
int receiver_signature_has(const char *header, const char *sig);

/*
 * Waits for event id to reach the receiver and checks its one delivery as a merchant sees
 * it: answered 204, JSON, signed with whsec, the body's id is id and its type is type.
 * Returns the body parsed (json_object_put it); its "data" into *data.
 */
struct json_object *receiver_event(const char *id, const char *whsec, const char *type,
    struct json_object **data);

#endif
