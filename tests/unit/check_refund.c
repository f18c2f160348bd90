/* Unit tests of the refund and reversal body rules (refund.c, reversal.c, intent.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "body.h"
#include "intent.h"
#include "json.h"
#include "money.h"
#include "refund.h"
#include "reversal.h"
#include "runner.h"

#define T1 "\"tr_0123456789abcdef0123456789abcdef\""
#define T2 "\"tr_fedcba9876543210fedcba9876543210\""

struct refund_case {
	const char *body;
	const char *message;   /* NULL: valid */
	const char *amount;    /* valid ones: the amount parameter ("" = NULL) */
	const char *transfers; /* and the array texts (NULL = none) */
	const char *amounts;
};

static const struct refund_case refunds[] = {
	{ "{}", NULL, "", NULL, NULL },
	{ "{\"amount\":null,\"reason\":null}", NULL, "", NULL, NULL },
	{ "{\"amount\":5.00,\"reason\":\"damaged\"}", NULL, "500", NULL, NULL },
	{ "{\"amount\":0.01}", NULL, "1", NULL, NULL },
	{ "{\"reverse_transfers\":[{\"transfer_id\":" T1 ",\"amount\":3}]}", NULL, "",
	  "{tr_0123456789abcdef0123456789abcdef}", "{300}" },
	{ "{\"amount\":4,\"reverse_transfers\":[{\"transfer_id\":" T1 "},{\"transfer_id\":" T2
	  ",\"amount\":0.5}]}", NULL, "400",
	  "{tr_0123456789abcdef0123456789abcdef,tr_fedcba9876543210fedcba9876543210}",
	  "{NULL,50}" },
	{ "{\"amount\":0}", "amount must be greater than 0", NULL, NULL, NULL },
	{ "{\"amount\":-1}", "amount must not be negative", NULL, NULL, NULL },
	{ "{\"amount\":1.001}", "amount must have at most two decimal places", NULL, NULL, NULL },
	{ "{\"amount\":1e3}", "amount must be a plain decimal number such as 12.50", NULL, NULL,
	  NULL },
	{ "{\"amount\":\"5.00\"}", "amount must be a number", NULL, NULL, NULL },
	{ "{\"amount\":1000000000}", "amount is above the maximum amount", NULL, NULL, NULL },
	{ "{\"reason\":5}", "reason must be a string", NULL, NULL, NULL },
	{ "{\"currency\":\"USD\"}", "currency is not a known field", NULL, NULL, NULL },
	{ "{\"reverse_transfers\":{}}", "reverse_transfers must be an array", NULL, NULL, NULL },
	{ "{\"reverse_transfers\":[]}", "reverse_transfers must not be empty", NULL, NULL, NULL },
	{ "{\"reverse_transfers\":[" T1 "]}", "reverse_transfers[0] must be an object", NULL,
	  NULL, NULL },
	{ "{\"reverse_transfers\":[{\"amount\":1}]}",
	  "reverse_transfers[0].transfer_id is required", NULL, NULL, NULL },
	{ "{\"reverse_transfers\":[{\"transfer_id\":\"tr_1}\"}]}",
	  "reverse_transfers[0].transfer_id: no such transfer", NULL, NULL, NULL },
	{ "{\"reverse_transfers\":[{\"transfer_id\":\"TR_0123456789ABCDEF0123456789ABCDEF\"}]}",
	  "reverse_transfers[0].transfer_id: no such transfer", NULL, NULL, NULL },
	{ "{\"reverse_transfers\":[{\"transfer_id\":" T1 ",\"amount\":0}]}",
	  "reverse_transfers[0].amount must be greater than 0", NULL, NULL, NULL },
	{ "{\"reverse_transfers\":[{\"transfer_id\":" T1 ",\"pin\":\"1\"}]}",
	  "reverse_transfers[0].pin is not a known field", NULL, NULL, NULL },
	{ "{\"reverse_transfers\":[{\"transfer_id\":" T1 "},{\"transfer_id\":" T2 "},"
	  "{\"transfer_id\":" T1 "}]}",
	  "reverse_transfers[2].transfer_id repeats reverse_transfers[0].transfer_id", NULL, NULL,
	  NULL },
};

static const struct config cfg = { .max_vendors = 16, .max_amount = MONEY_MAX_DEFAULT };

START_TEST(test_refund_bodies)
{
	const struct refund_case *c = &refunds[_i];
	struct json_object *root;
	struct refund_in in;
	char msg[256] = "", amount[24];
	const char *a;
	bool ok;

	root = json_parse_strict(c->body, strlen(c->body), msg, sizeof(msg));
	ck_assert_msg(root != NULL, "%s", msg);
	memset(&in, 0, sizeof(in));
	ok = body_validate(&refund_body, &cfg, root, &in, msg, sizeof(msg));
	if (c->message == NULL) {
		ck_assert_msg(ok, "%s: %s", c->body, msg);
		a = intent_amount(&in.refund, amount);
		ck_assert_str_eq(a == NULL ? "" : a, c->amount);
		if (c->transfers == NULL)
			ck_assert(in.transfers == NULL && in.amounts == NULL);
		else {
			ck_assert_str_eq(in.transfers, c->transfers);
			ck_assert_str_eq(in.amounts, c->amounts);
		}
	} else {
		ck_assert_msg(!ok, "accepted %s", c->body);
		ck_assert_str_eq(msg, c->message);
	}
	refund_body.release(&in);
	json_object_put(root);
}
END_TEST

/* reason: 500 characters, counted as characters (here two bytes each), and not one more. */
START_TEST(test_reason_limit)
{
	char body[2048], msg[256];
	struct json_object *root;
	struct intent_in in;
	int n;

	for (n = 500; n <= 501; n++) {
		strcpy(body, "{\"reason\":\"");
		for (int i = 0; i < n; i++)
			strcat(body, "\xd8\xb1");  /* ر */
		strcat(body, "\"}");
		root = json_parse_strict(body, strlen(body), msg, sizeof(msg));
		ck_assert_ptr_nonnull(root);
		memset(&in, 0, sizeof(in));
		ck_assert_int_eq(body_validate(&reversal_body, &cfg, root, &in, msg, sizeof(msg)),
		    n == 500);
		if (n > 500)
			ck_assert_str_eq(msg, "reason must be at most 500 characters");
		json_object_put(root);
	}
}
END_TEST

START_TEST(test_reverse_limit)
{
	char body[8192] = "{\"reverse_transfers\":[", msg[256];
	struct config few = cfg;
	struct json_object *root;
	struct refund_in in;
	int i;

	for (i = 0; i < 17; i++)
		snprintf(body + strlen(body), sizeof(body) - strlen(body),
		    "%s{\"transfer_id\":\"tr_%032x\"}", i ? "," : "", i);
	strcat(body, "]}");
	root = json_parse_strict(body, strlen(body), msg, sizeof(msg));
	ck_assert_ptr_nonnull(root);
	memset(&in, 0, sizeof(in));
	ck_assert(!body_validate(&refund_body, &cfg, root, &in, msg, sizeof(msg)));
	ck_assert_str_eq(msg, "reverse_transfers must have at most 16 entries");
	refund_body.release(&in);
	few.max_vendors = 17;
	memset(&in, 0, sizeof(in));
	ck_assert(body_validate(&refund_body, &few, root, &in, msg, sizeof(msg)));
	ck_assert_ptr_nonnull(strstr(in.amounts, "NULL,NULL"));
	refund_body.release(&in);
	json_object_put(root);
}
END_TEST

START_TEST(test_id_forms)
{
	ck_assert(intent_id_ok("re_0123456789abcdef0123456789abcdef", "re_"));
	ck_assert(!intent_id_ok("re_0123456789abcdef0123456789abcdeF", "re_"));
	ck_assert(!intent_id_ok("re_0123456789abcdef0123456789abcde", "re_"));
	ck_assert(!intent_id_ok("re_0123456789abcdef0123456789abcdef0", "re_"));
	ck_assert(!intent_id_ok("tr_0123456789abcdef0123456789abcdef", "re_"));
	ck_assert(!intent_id_ok("", "re_"));
}
END_TEST

static Suite *
refund_suite(void)
{
	Suite *s = suite_create("refund");
	TCase *tc = tcase_create("bodies");

	tcase_add_loop_test(tc, test_refund_bodies, 0, (int)NELEM(refunds));
	tcase_add_test(tc, test_reason_limit);
	tcase_add_test(tc, test_reverse_limit);
	tcase_add_test(tc, test_id_forms);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return run_suite(refund_suite());
}
