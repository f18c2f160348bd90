#ifndef MP_TEST_LISTS_H
#define MP_TEST_LISTS_H

#include <json-c/json.h>

#include "http.h"

/*
 * What the list suites share (marketpay-api(7), LISTS): a page fetched and checked for the
 * list form, the ids it holds, and a whole collection walked page by page.
 */

#define LISTS "/api/v1/payment/"

/*
 * GETs LISTS + the path fmt makes as auth into r, which must be a 200 of the list form
 * ({status_code: 10, success: true, data: [...], has_more}); returns its data (owned by r).
 */
struct json_object *list_page(const char *auth, struct http_resp *r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* list_page of the path fmt makes, whose items' key members are want (as list_ids). */
void list_expect(const char *auth, const char *key, const char *want, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* r's has_more. */
int list_has_more(const struct http_resp *r);

/* The key member (such as "id") of every item of data, space-separated (static buffer). */
const char *list_ids(struct json_object *data, const char *key);

/*
 * Every item of collection (such as "refunds?status=paid") as auth, walked with limit per
 * page by starting_after (backward: from before, by ending_before), checking has_more on
 * each page; between pages, calls between(arg) (NULL: nothing). The ids newest first,
 * space-separated (static buffer).
 */
const char *list_walk(const char *auth, const char *collection, const char *key, int limit,
    const char *before, void (*between)(void *), void *arg);

/*
 * list_walk with the arrivals at the same time as the pages: each page's request is sent at
 * once (http_parallel_reqs) with the requests race(arg, reqs) puts in reqs (at most
 * LIST_RACE_MAX; it returns how many, their strings lasting until its next call), each of
 * which must answer 200.
 */
#define LIST_RACE_MAX 4
const char *list_walk_racing(const char *auth, const char *collection, const char *key,
    int limit, const char *before, int (*race)(void *, struct http_req *), void *arg);

/* GETs LISTS + path as auth, which must be refused with status and a message holding
 * needle, leaving the database exactly as it was (db_footprint). */
void list_refused(const char *auth, const char *path, long status, const char *needle);

/*
 * n deposits of 0.01 into account acct, posted in one statement (mp_post, as marketpayctl
 * account deposit posts them): a long list of balance transactions made fast. Exits, as
 * need(), when they were not.
 */
void list_deposits(const char *acct, int n);

/* Minor units of a money string such as "-12.50". */
long long list_cents(const char *money);

#endif
