/*
 * libFuzzer target: a send-money-MultiVendor body as transfer_send reads it,
 * json_parse_strict then transfer_validate, under the default limits and under tight ones,
 * and then the pin field through crypto_unbase64 as settle_pin_check decodes it. Refusals
 * must reply strict JSON; the array literals given to PostgreSQL must hold exactly the
 * accepted vendors.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crypto.h"
#include "json.h"
#include "money.h"
#include "transfer.h"
#include "fuzz.h"

/* Decoding what base64 made gives back the bytes; crypto_unbase64 never reads past text. */
static void
check_pin(const char *pin)
{
	unsigned char *raw, *back;
	size_t rawlen = 0, backlen = 0;
	char *text;

	if ((raw = crypto_unbase64(pin, &rawlen)) == NULL)
		return;
	FUZZ_ASSERT(rawlen <= strlen(pin) / 4 * 3);
	FUZZ_ASSERT((text = crypto_base64(raw, rawlen)) != NULL);
	back = crypto_unbase64(text, &backlen);
	FUZZ_ASSERT(back != NULL && backlen == rawlen && memcmp(back, raw, rawlen) == 0);
	free(back);
	free(text);
	free(raw);
}

static void
check_accepted(const struct transfer_in *in, long max_vendors, int64_t max_amount)
{
	size_t n = json_object_array_length(in->vendors), i, commas = 0;
	char *p, *end;
	int64_t sum = 0;

	FUZZ_ASSERT(n >= 1 && n <= (size_t)max_vendors);
	FUZZ_ASSERT(in->total > 0 && in->total <= max_amount);
	FUZZ_ASSERT(in->pin != NULL && in->pin[0] != '\0');
	/* "{VE0123456789,...}": n accounts of two letters and ten digits. */
	FUZZ_ASSERT(strlen(in->accounts) == n * 13 + 1 && in->accounts[0] == '{');
	for (p = in->accounts; *p != '\0'; p++)
		commas += *p == ',';
	FUZZ_ASSERT(commas == n - 1);
	/* "{1200,...}": the amounts add up to the total. */
	FUZZ_ASSERT(in->amounts[0] == '{');
	for (p = in->amounts + 1, i = 0; i < n; i++, p = end + 1) {
		long long v = strtoll(p, &end, 10);

		FUZZ_ASSERT(end > p && v > 0 && v <= max_amount);
		FUZZ_ASSERT(*end == (i + 1 == n ? '}' : ','));
		sum += v;
	}
	FUZZ_ASSERT(sum == in->total && *p == '\0');
	check_pin(in->pin);
}

static void
check(struct json_object *root, long max_vendors, int64_t max_amount)
{
	struct transfer_in in;
	char msg[512]; /* as transfer_send's */

	msg[0] = '\0';
	if (transfer_validate(root, max_vendors, max_amount, &in, msg, sizeof(msg))) {
		check_accepted(&in, max_vendors, max_amount);
		free(in.accounts);
		free(in.amounts);
	} else {
		FUZZ_ASSERT(in.accounts == NULL && in.amounts == NULL);
		fuzz_check_fail(msg);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct json_object *root = fuzz_parse(data, size);

	if (root == NULL)
		return 0;
	check(root, fuzz_app.cfg.max_vendors, fuzz_app.cfg.max_amount);
	check(root, 2, 1000);
	json_object_put(root);
	return 0;
}
