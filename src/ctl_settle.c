/* marketpayctl pin-key generate, merchant pin, merchant settlement: multi-vendor settlement. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crypto.h"
#include "ctl.h"
#include "pin.h"

int
ctl_pin_key_generate(struct ctl *c, int argc, char **argv)
{
	const char *path = c->cfg.pin_key_file;
	struct crypto_pkey *k;
	struct stat st;
	char *pem;
	int force = argc == 1 && strcmp(argv[0], "--force") == 0;

	if (argc > 1 || (argc == 1 && !force))
		return ctl_fail("usage: marketpayctl pin-key generate [--force]");
	/* Replacing the key invalidates every PIN merchants have encrypted to the old one. */
	if (!force && stat(path, &st) == 0)
		return ctl_fail("%s exists; --force replaces it", path);
	if (crypto_pkey_generate(path, 3072) != 0)
		return ctl_fail("%s: cannot write the key", path);
	if ((k = crypto_pkey_load(path)) == NULL || (pem = crypto_pkey_public_pem(k)) == NULL) {
		crypto_pkey_free(k);
		return ctl_fail("%s: cannot read the key back", path);
	}
	fputs(pem, stdout);
	crypto_pkey_free(k);
	free(pem);
	return 0;
}

int
ctl_merchant_pin(struct ctl *c, int argc, char **argv)
{
	char pin[64] = "", digest[67], missing[64];
	const char *p[2];
	int rc;

	if (argc != 1 || !ctl_is_id(argv[0]))
		return ctl_fail("usage: marketpayctl merchant pin MERCHANT_ID < pin");
	if (fgets(pin, sizeof(pin), stdin) == NULL)
		return ctl_fail("no PIN on standard input");
	pin[strcspn(pin, "\r\n")] = '\0';
	rc = pin_format_ok(pin) ? pin_digest(c->cfg.pepper_file, pin, digest) : -2;
	crypto_wipe(pin, sizeof(pin));
	if (rc == -2)
		return ctl_fail("a PIN is %d to %d digits", PIN_MIN, PIN_MAX);
	if (rc != 0)
		return ctl_fail("%s: cannot read the pepper (32 bytes)", c->cfg.pepper_file);
	p[0] = argv[0];
	p[1] = digest;
	snprintf(missing, sizeof(missing), "no merchant %s", argv[0]);
	return ctl_exec_print(c, "merchant pin", "UPDATE merchants SET pin_digest = $2::bytea,"
	    " pin_failures = 0, pin_locked_until = NULL WHERE id = $1::bigint RETURNING id", 2,
	    p, missing);
}

int
ctl_merchant_settlement(struct ctl *c, int argc, char **argv)
{
	const char *p[2];
	char missing[64];

	if (argc != 2 || !ctl_is_id(argv[0]) ||
	    (strcmp(argv[1], "on") != 0 && strcmp(argv[1], "off") != 0))
		return ctl_fail("usage: marketpayctl merchant settlement MERCHANT_ID on|off");
	p[0] = argv[0];
	p[1] = strcmp(argv[1], "on") == 0 ? "true" : "false";
	snprintf(missing, sizeof(missing), "no merchant %s", argv[0]);
	return ctl_exec_print(c, "merchant settlement", "UPDATE merchants SET settlement_enabled ="
	    " $2::boolean WHERE id = $1::bigint RETURNING id", 2, p, missing);
}
