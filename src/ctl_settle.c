/* marketpayctl pin-key generate, merchant settlement: multi-vendor settlement. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crypto.h"
#include "ctl.h"

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
