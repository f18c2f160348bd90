/*
 * A compromised worker: logged in as the workers' login role (mp_worker) straight to the
 * stack's database, it tries to create, move or fake money and events. Every attempt is
 * refused with SQLSTATE 42501 (or by the intent function's own checks), the role can still
 * log in and the API still works, and the ledger, sessions and outbox are unchanged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <libpq-fe.h>

#include "fixture.h"
#include "http.h"

#define CTL_PROD "\"$MARKETPAYCTL\" -c \"$MARKETPAY_STACK_DIR/prod.conf\" "

/* Set up once before the cases (they run forked and inherit it). */
static char customer[16], vendor[16], merchant_acct[16], system_id[32], customer_id[32];
static char merchant_acct_id[32], session[40];

/* Runs sql as mp_worker; its SQLSTATE into state[6] ("00000": it ran). */
static const char *
as_worker(const char *sql, char state[6])
{
	return db_as("mp_worker", sql, state);
}

/* What the review did as the workers' role, and more: each must be refused (42501). */
static const char *const attacks[] = {
	/* mint money from the system account; drain a wallet without its PIN */
	"SELECT mp_post('adjustment', NULL, 'x', 'AFN', ARRAY[$SYS, $CUS]::bigint[],"
	" ARRAY[-100000000, 100000000]::bigint[])",
	"SELECT mp_post('payment', NULL, 'x', 'AFN', ARRAY[$CUS, $MEA]::bigint[],"
	" ARRAY[-100, 100]::bigint[])",
	/* the functions inside the intents, called directly */
	"SELECT * FROM mp_pay_session('$SES', 'wallet', $CUS, NULL, NULL)",
	"SELECT * FROM mp_transfer(1, 'AFN', ARRAY['$VEN'], ARRAY[100]::bigint[], 'UTC')",
	"SELECT mp_close_session('$SES', 'paid', NULL)",
	"SELECT mp_funding_account('AFN')",
	"SELECT mp_merchant_account(1, 'AFN')",
	"SELECT mp_pin_judge(NULL, 2::smallint, 0, 0, NULL, NULL, NULL)",
	"SELECT mp_session_lock('$SES')",
	/* say a session is paid; fake an event or a transfer */
	"UPDATE payment_sessions SET status = 'paid', paid_at = now() WHERE id = '$SES'",
	/* the page's language is set when the session is made, not later (sql/030) */
	"UPDATE payment_sessions SET locale = 'en' WHERE id = '$SES'",
	"INSERT INTO payment_sessions (merchant_id, status, amount, currency, expires_at,"
	" paid_at, payment_method, transaction_id) SELECT merchant_id, 'paid', 100, 'AFN',"
	" now() + interval '1 hour', now(), 'wallet', (SELECT max(id) FROM ledger_transactions)"
	" FROM payment_sessions LIMIT 1",
	"INSERT INTO webhook_events (id, merchant_id, type, body) VALUES"
	" ('evt_00000000000000000000000000000000', 1, 'payment.succeeded', '{}')",
	"INSERT INTO transfers (id, ledger_transaction_id, merchant_id, vendor_account_id, amount,"
	" position) VALUES ('tr_00000000000000000000000000000000', 1, 1, $CUS, 1, 0)",
	/* ledger rows, balances, accounts */
	"INSERT INTO ledger_transactions (kind) VALUES ('adjustment')",
	"INSERT INTO accounts (account_number, kind, currency) VALUES ('CU0000000018', 'customer',"
	" 'AFN')",
	"UPDATE accounts SET balance = balance + 100 WHERE id = $CUS",
	"UPDATE accounts SET status = 'active' WHERE id = $CUS",
	/* PIN state and secrets */
	"UPDATE accounts SET pin_failures = 0, pin_locked_until = NULL",
	"UPDATE merchants SET pin_failures = 0, pin_locked_until = NULL",
	"UPDATE merchants SET settlement_enabled = true",
	"SELECT pin_digest FROM accounts",
	"SELECT pin_digest FROM merchants",
	"SELECT webhook_secret_sealed FROM merchants",
	"SELECT webhook_secret_previous_sealed FROM merchants",
	/* signing secrets other than through mp_rotate_webhook_secret */
	"UPDATE merchants SET webhook_secret_sealed = webhook_secret_previous_sealed",
	"UPDATE merchants SET webhook_secret_previous_until = now() + interval '1 year'",
	"UPDATE mp_settings SET webhook_secret_rotation_window = 2592000",
	"INSERT INTO pin_nonces (merchant_id, nonce) VALUES (1, '0123456789abcdef')",
	"DELETE FROM pin_nonces",
	/* the environment and the PIN policy */
	"UPDATE mp_settings SET environment = 'production'",
	"UPDATE mp_settings SET pin_max_attempts = 100",
	"UPDATE mp_settings SET redeliveries_per_minute = 1000",
	/* redeliveries other than through mp_redeliver_event, which counts them */
	"UPDATE webhook_events SET status = 'pending', attempts = 0",
	"INSERT INTO webhook_redeliveries (event_id, merchant_id) SELECT id, merchant_id"
	" FROM webhook_events LIMIT 1",
	"DELETE FROM webhook_redeliveries",
	/* refunds and reversals other than through mp_refund_session and mp_reverse_transfer */
	"INSERT INTO refunds (id, session_id, merchant_id, ledger_transaction_id, amount, currency)"
	" VALUES ('re_00000000000000000000000000000000', '$SES', 1, 1, 1, 'AFN')",
	"INSERT INTO transfer_reversals (id, transfer_id, merchant_id, ledger_transaction_id,"
	" amount, currency) VALUES ('trr_00000000000000000000000000000000',"
	" 'tr_00000000000000000000000000000000', 1, 1, 1, 'AFN')",
	"UPDATE payment_sessions SET amount_refunded = 0 WHERE id = '$SES'",
	"UPDATE transfers SET amount_reversed = 0",
	"UPDATE refunds SET reason = 'changed'",
	"DELETE FROM refunds",
	"DELETE FROM transfer_reversals",
	/* the functions inside those intents, called directly */
	"SELECT * FROM mp_reversal_plan(1, ARRAY['tr_00000000000000000000000000000000'],"
	" ARRAY[1]::bigint[], NULL)",
	"SELECT mp_reversal_funds($MEA, 'AFN', 100, '[]'::jsonb, $CUS, NULL, 'x')",
	"SELECT mp_reversal_record(1, 'AFN', '[]'::jsonb, 1, NULL, NULL)",
	"SELECT mp_queue_event(1, 'refund.succeeded', '{}'::json)",
	/* the lifecycle events' functions: the sweep is the daemon's, the rest nobody's */
	"SELECT mp_expire_sessions(1000)",
	"SELECT mp_session_expire('$SES')",
	"SELECT mp_session_event('$SES', 'session.expired')",
	"SELECT mp_transfer_event(1)",
	"SELECT mp_pin_attempt('accounts', $CUS, 'x', NULL, 2::smallint, 0, 0, NULL, NULL, NULL)",
	"UPDATE merchants SET webhook_event_types = NULL",
	/* a function of its own in our schema, shadowing ours */
	"CREATE FUNCTION public.mp_iso(text) RETURNS text LANGUAGE sql AS 'SELECT 1::text'",
};
#define NATTACKS ((int)(sizeof(attacks) / sizeof(attacks[0])))

/* attacks[i] with $SYS, $CUS, $MEA, $VEN, $SES filled in, into out. */
static const char *
expand(const char *in, char *out, size_t n)
{
	static const struct { const char *name; const char *value; } vars[] = {
		{ "$SYS", system_id }, { "$CUS", customer_id }, { "$MEA", merchant_acct_id },
		{ "$VEN", vendor }, { "$SES", session },
	};
	size_t len = 0, i;

	while (*in != '\0' && len + 64 < n) {
		for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
			if (strncmp(in, vars[i].name, 4) == 0)
				break;
		if (i < sizeof(vars) / sizeof(vars[0])) {
			len += (size_t)snprintf(out + len, n - len, "%s", vars[i].value);
			in += 4;
		} else
			out[len++] = *in++;
	}
	out[len] = '\0';
	return out;
}

START_TEST(test_worker_cannot)
{
	char before[FOOTPRINT_LEN], sql[2048], state[6];

	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	ck_assert_str_eq(as_worker(expand(attacks[_i], sql, sizeof(sql)), state), "42501");
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	assert_ledger_ok();
}
END_TEST

/* The positive control: the same login works, reads, and the API serves with it. */
START_TEST(test_worker_can)
{
	const char *h[] = { JSON_CT, fx.auth_a, NULL };
	char state[6];
	struct http_resp r;

	ck_assert_str_eq(as_worker("SELECT id, account_number, balance FROM accounts", state),
	    "00000");
	ck_assert_str_eq(as_worker("SELECT id, name, currency FROM merchants", state), "00000");
	ck_assert_str_eq(as_worker("SELECT mp_environment()", state), "00000");
	ck_assert_int_eq(http_do("POST", CREATE, h,
	    "{\"items\":[{\"id\":\"a\",\"name\":\"Tea\",\"price\":1.00}]}", -1, &r), 0);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	http_free(&r);
}
END_TEST

/*
 * The security definer functions the role can reach are exactly the intents (and
 * mp_key_used, which only notes when an API key was last used), and each checks what it
 * is asked: without the customer's PIN a wallet pays nothing (the attempt is
 * counted), without the merchant's PIN no transfer moves money.
 */
START_TEST(test_intents_check_themselves)
{
	char before[FOOTPRINT_LEN], sql[512], state[6];
	const char *fail0;

	ck_assert_str_eq(db_value("SELECT string_agg(p.proname, ',' ORDER BY p.proname)"
	    " FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.prosecdef AND"
	    " n.nspname = 'public' AND has_function_privilege('mp_worker', p.oid, 'EXECUTE')",
	    NULL), "mp_cancel_session,mp_expire_session,mp_key_used,mp_pay_test_card,mp_pay_wallet,"
	    "mp_purge_events,mp_purge_idempotency,mp_purge_sessions,mp_redeliver_event,mp_refund_session,mp_reverse_transfer,"
	    "mp_rotate_webhook_secret,mp_transfer_send");
	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	fail0 = db_value("SELECT pin_failures FROM accounts WHERE account_number = $1", customer);
	ck_assert_ptr_nonnull(fail0);
	ck_assert_str_eq(fail0, "0");
	snprintf(sql, sizeof(sql), "SELECT 1 FROM mp_pay_wallet('%s', '%s', '\\x%064d',"
	    " '\\x%064d') WHERE outcome = 'wrong_pin'", session, customer, 0, 0);
	ck_assert_str_eq(as_worker(sql, state), "00000");
	ck_assert_str_eq(db_value("SELECT pin_failures FROM accounts WHERE account_number = $1",
	    customer), "1");
	snprintf(sql, sizeof(sql), "SELECT 1 FROM mp_transfer_send(%s, '\\x%064d', '\\x%064d',"
	    " extract(epoch FROM now())::bigint, 'attackerattackerattacker', ARRAY['%s'],"
	    " ARRAY[100]::bigint[], 'UTC') WHERE outcome IN ('wrong_pin', 'not_enabled')",
	    fx.merchant_a, 0, 0, vendor);
	ck_assert_str_eq(as_worker(sql, state), "00000");
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
}
END_TEST

/*
 * mp_create_session checks what the worker passes it, whatever C checked before: a sum of
 * prices past bigint, no items, a price that is not positive and a revoked key store
 * nothing; a good call stores the sum as the amount and the items in their order.
 */
START_TEST(test_create_session_checks_itself)
{
	static const struct { const char *key, *ids, *names, *prices, *want; } calls[] = {
		{ fx.key_a, "{a,b}", "{A,B}", "{9223372036854775807,1}", "22003" },
		{ fx.key_a, "{}", "{}", "{}", "23502" },
		{ fx.key_a, "{a,b}", "{A,B}", "{100,0}", "23514" },
		{ fx.key_a, "{a}", "{A}", "{NULL}", "23502" },
		{ fx.key_revoked, "{a}", "{A}", "{100}", "no row" },
	};
	char before[FOOTPRINT_LEN], sql[1024], state[6], digest[72];
	const char *id;
	size_t i;

	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		/*
		 * The key's digest, as the worker passes it: a refused statement's text is in the
		 * server's log, and the key must never be (tests/integration.sh looks).
		 */
		ck_assert_ptr_nonnull(id = db_value("SELECT encode(sha256(convert_to($1, 'UTF8')),"
		    " 'hex')", calls[i].key));
		snprintf(digest, sizeof(digest), "%s", id);
		snprintf(sql, sizeof(sql), "SELECT 1/count(*) FROM mp_create_session('\\x%s',"
		    " 'sandbox', 'u', NULL, NULL, NULL, 600, '%s', '%s', '%s', NULL)", digest,
		    calls[i].ids, calls[i].names, calls[i].prices);
		/* 1/count(*): no row fails as a division by zero (22012). */
		ck_assert_msg(strcmp(as_worker(sql, state), strcmp(calls[i].want, "no row") == 0 ?
		    "22012" : calls[i].want) == 0, "call %zu: %s", i, state);
		ck_assert_str_eq(db_footprint(NULL, NULL), before);
	}
	snprintf(sql, sizeof(sql), "SELECT id FROM mp_create_session(sha256(convert_to($1,"
	    " 'UTF8')), 'sandbox', 'u', NULL, NULL, NULL, 600, '{x,y,z}', '{X,Y,Z}',"
	    " '{1250,300,7}', 'fa_AF')");
	ck_assert_ptr_nonnull(id = db_value(sql, fx.key_a));
	snprintf(sql, sizeof(sql), "%s", id);
	ck_assert_str_eq(db_value("SELECT s.amount || '/' || s.currency || '/' || s.locale || '/'"
	    " || string_agg(i.position || i.item_id || i.name || i.price, ',' ORDER BY i.position)"
	    " FROM payment_sessions s JOIN session_items i ON i.session_id = s.id WHERE s.id = $1"
	    " GROUP BY s.id", sql), "1557/AFN/fa_AF/0xX1250,1yY300,2zZ7");
}
END_TEST

/*
 * The positive control of the refund attacks: the role refunds through mp_refund_session
 * (a session it paid through mp_pay_test_card) and may call mp_reverse_transfer, which
 * answers for itself (MP030: no such transfer of the merchant) rather than 42501.
 */
START_TEST(test_worker_refunds_through_intents)
{
	const char *h[] = { JSON_CT, fx.auth_a, NULL };
	char id[40], sql[512], state[6];
	struct http_resp r;

	ck_assert_int_eq(http_do("POST", CREATE, h,
	    "{\"items\":[{\"id\":\"a\",\"name\":\"Tea\",\"price\":3.00}]}", -1, &r), 0);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	snprintf(id, sizeof(id), "%s", http_json_str(&r, "session_id"));
	http_free(&r);
	snprintf(sql, sizeof(sql), "SELECT * FROM mp_pay_test_card('%s', 'visa', '4242', NULL)",
	    id);
	ck_assert_str_eq(as_worker(sql, state), "00000");
	snprintf(sql, sizeof(sql), "SELECT mp_refund_session(%s, '%s', 100, 'control', NULL,"
	    " NULL)", fx.merchant_a, id);
	ck_assert_str_eq(as_worker(sql, state), "00000");
	ck_assert_str_eq(db_value("SELECT amount_refunded || ' ' || status || ' ' || (SELECT"
	    " count(*) FROM refunds WHERE session_id = s.id) FROM payment_sessions s WHERE id ="
	    " $1::uuid", id), "100 paid 1");
	snprintf(sql, sizeof(sql), "SELECT mp_reverse_transfer(%s, 'tr_%032d', NULL, NULL)",
	    fx.merchant_a, 0);
	ck_assert_str_eq(as_worker(sql, state), "MP030");
	/* Whatever their signatures become, no form of the functions inside is the role's. */
	ck_assert_str_eq(db_value("SELECT count(DISTINCT proname) || ' ' || count(*) FILTER (WHERE"
	    " has_function_privilege('mp_worker', oid, 'EXECUTE')) FROM pg_proc WHERE proname IN"
	    " ('mp_post', 'mp_reversal_plan', 'mp_reversal_funds', 'mp_reversal_record',"
	    " 'mp_queue_event')", NULL), "5 0");
	assert_ledger_ok();
}
END_TEST

/* A test card pays only when the database serves the sandbox (mp_settings). */
START_TEST(test_test_card_needs_sandbox_database)
{
	char before[FOOTPRINT_LEN], sql[512], state[6];

	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	ck_assert_ptr_nonnull(db_value("UPDATE mp_settings SET environment = 'production'"
	    " RETURNING 1", NULL));
	snprintf(sql, sizeof(sql), "SELECT * FROM mp_pay_test_card('%s', 'visa', '4242', NULL)",
	    session);
	ck_assert_str_eq(as_worker(sql, state), "MP021");
	ck_assert_ptr_nonnull(db_value("UPDATE mp_settings SET environment = 'sandbox'"
	    " RETURNING 1", NULL));
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
	/* The positive control: in the sandbox the same call pays. */
	ck_assert_str_eq(as_worker(sql, state), "00000");
	ck_assert_str_eq(db_value("SELECT status FROM payment_sessions WHERE id = $1::uuid",
	    session), "paid");
	assert_ledger_ok();
}
END_TEST

/*
 * A program configured for production, pointed at this sandbox database, refuses it: the
 * workers answer 503 (the health check says the database is unusable) and log why,
 * webhookd delivers nothing, marketpayctl exits 1 and cannot re-label the database.
 */
START_TEST(test_other_environment_refused)
{
	const char *h[] = { NULL };
	struct http_resp r;
	char before[FOOTPRINT_LEN];

	snprintf(before, sizeof(before), "%s", db_footprint(NULL, NULL));
	ck_assert_int_eq(sh("cd \"$MARKETPAY_STACK_DIR\" && sed 's/^environment = .*/environment"
	    " = production/' marketpay.conf > prod.conf && sed 's/^environment = .*/environment ="
	    " production/' webhookd.conf > prod-webhookd.conf"), 0);
	ck_assert_int_ne(sh(CTL_PROD "ledger verify 2>\"$MARKETPAY_STACK_DIR/prod.err\""), 0);
	ck_assert_int_eq(sh("grep -q 'the database serves sandbox, this program is configured for"
	    " production' \"$MARKETPAY_STACK_DIR/prod.err\""), 0);
	ck_assert_int_ne(sh(CTL_PROD "db migrate >/dev/null 2>&1"), 0);
	ck_assert_int_ne(sh(CTL_PROD "key create %s >/dev/null 2>&1", fx.merchant_a), 0);
	ck_assert_int_eq(sh("timeout 3 \"$MARKETPAY_WEBHOOKD\" -c \"$MARKETPAY_STACK_DIR/"
	    "prod-webhookd.conf\" 2>\"$MARKETPAY_STACK_DIR/prod.err\"; grep -q 'the database serves"
	    " sandbox' \"$MARKETPAY_STACK_DIR/prod.err\""), 0);
	/* The pool, restarted with a production worker.conf, then as it was. */
	ck_assert_int_eq(sh("d=\"$MARKETPAY_STACK_DIR\" && \"$MP_STACK\" pool-stop \"$d\" && cp"
	    " \"$d/worker.conf\" \"$d/worker.conf.orig\" && sed -i 's/^environment = .*/environment"
	    " = production/' \"$d/worker.conf\" && \"$MP_STACK\" pool-start \"$d\" >/dev/null"), 0);
	ck_assert_int_eq(http_do("GET", "/api/v1/health", h, NULL, 0, &r), 0);
	ck_assert_msg(r.status == 503, "%ld %s", r.status, r.body);
	http_free(&r);
	ck_assert_int_eq(sh("grep -q 'the database serves sandbox, this program is configured for"
	    " production: refusing it' \"$MARKETPAY_STACK_DIR/fcgi.log\""), 0);
	ck_assert_int_eq(sh("d=\"$MARKETPAY_STACK_DIR\" && \"$MP_STACK\" pool-stop \"$d\" && mv"
	    " \"$d/worker.conf.orig\" \"$d/worker.conf\" && \"$MP_STACK\" pool-start \"$d\""
	    " >/dev/null"), 0);
	ck_assert_int_eq(http_do("GET", "/api/v1/health", h, NULL, 0, &r), 0);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	http_free(&r);
	ck_assert_str_eq(db_value("SELECT environment FROM mp_settings", NULL), "sandbox");
	ck_assert_str_eq(db_footprint(NULL, NULL), before);
}
END_TEST

/*
 * Account numbers do not come from random(): with its seed fixed, random() repeats itself,
 * and two account numbers made after the same setseed() must still differ.
 */
START_TEST(test_account_numbers_unpredictable)
{
	ck_assert_str_eq(db_value("WITH a AS (SELECT setseed(0.42)), b AS (SELECT"
	    " mp_new_account_number('CU') n FROM a), c AS (SELECT setseed(0.42) FROM b),"
	    " d AS (SELECT mp_new_account_number('CU') n FROM c), e AS (SELECT setseed(0.42) FROM d),"
	    " f AS (SELECT random() r FROM e), g AS (SELECT setseed(0.42) FROM f),"
	    " h AS (SELECT random() r FROM g)"
	    " SELECT (b.n <> d.n) || '/' || (f.r = h.r) FROM b, d, f, h", NULL), "true/true");
}
END_TEST

static void
setup(void)
{
	const char *h[] = { JSON_CT, fx.auth_a, NULL }, *s;
	struct http_resp r;
	char args[96];

	need((s = ctl("account create --kind customer")) != NULL, "customer");
	snprintf(customer, sizeof(customer), "%s", s);
	need(ctl("account deposit %s 100.00", customer) != NULL, "deposit");
	need(sh("printf %%s 4321 | " CTL "account pin %s >/dev/null", customer) == 0, "pin");
	need((s = ctl("account create --kind vendor")) != NULL, "vendor");
	snprintf(vendor, sizeof(vendor), "%s", s);
	snprintf(args, sizeof(args), "account create --kind merchant --merchant %s",
	    fx.merchant_a);
	s = db_value("SELECT account_number FROM accounts WHERE kind = 'merchant' AND"
	    " merchant_id = $1::bigint", fx.merchant_a);
	need((s = s != NULL ? s : ctl("%s", args)) != NULL, "merchant account");
	snprintf(merchant_acct, sizeof(merchant_acct), "%s", s);
	need((s = db_value("SELECT id FROM accounts WHERE kind = 'system' AND currency = 'AFN'",
	    NULL)) != NULL, "the funding account");
	snprintf(system_id, sizeof(system_id), "%s", s);
	need((s = db_value("SELECT id FROM accounts WHERE account_number = $1", customer)) != NULL,
	    "customer id");
	snprintf(customer_id, sizeof(customer_id), "%s", s);
	need((s = db_value("SELECT id FROM accounts WHERE account_number = $1", merchant_acct)) !=
	    NULL, "merchant account id");
	snprintf(merchant_acct_id, sizeof(merchant_acct_id), "%s", s);
	need(http_do("POST", CREATE, h,
	    "{\"items\":[{\"id\":\"a\",\"name\":\"Tea\",\"price\":1.00}]}", -1, &r) == 0 &&
	    r.status == 200 && http_json_str(&r, "session_id") != NULL, "create-session");
	snprintf(session, sizeof(session), "%s", http_json_str(&r, "session_id"));
	http_free(&r);
}

int
main(void)
{
	TCase *t;
	Suite *s = suite_one("intents", "a compromised worker", 60, &t);

	tcase_add_loop_test(t, test_worker_cannot, 0, NATTACKS);
	tcase_add_test(t, test_worker_can);
	tcase_add_test(t, test_intents_check_themselves);
	tcase_add_test(t, test_create_session_checks_itself);
	tcase_add_test(t, test_worker_refunds_through_intents);
	tcase_add_test(t, test_test_card_needs_sandbox_database);
	tcase_add_test(t, test_other_environment_refused);
	tcase_add_test(t, test_account_numbers_unpredictable);
	return fixture_main(s, setup, NULL);
}
