/* marketpayctl pin-key generate, merchant settlement: multi-vendor settlement. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "crypto.h"
#include "ctl.h"

/*
 * The key's size: 2048 bits unless --bits says 3072 or 4096. 2048-bit RSA is 112-bit
 * security, which NIST SP 800-57 accepts through 2030; one decryption of it costs about a
 * fifth of a 3072-bit one, and every transfer makes one (marketpayctl(1) has the figures).
 */
static int
pin_key_args(int argc, char **argv, int *bits, int *force)
{
	int i;

	*bits = 2048;
	*force = 0;
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--force") == 0 && !*force)
			*force = 1;
		else if (strcmp(argv[i], "--bits") == 0 && i + 1 < argc &&
		    (strcmp(argv[i + 1], "2048") == 0 || strcmp(argv[i + 1], "3072") == 0 ||
		    strcmp(argv[i + 1], "4096") == 0))
			*bits = atoi(argv[++i]);
		else
			return -1;
	}
	return 0;
}

int
ctl_pin_key_generate(struct ctl *c, int argc, char **argv)
{
	const char *path = c->cfg.pin_key_file;
	struct crypto_pkey *k;
	struct stat st;
	char *pem;
	int bits, force;

	if (pin_key_args(argc, argv, &bits, &force) != 0)
		return ctl_fail("usage: marketpayctl pin-key generate [--bits 2048|3072|4096] [--force]");
	/* Replacing the key invalidates every PIN merchants have encrypted to the old one. */
	if (!force && stat(path, &st) == 0)
		return ctl_fail("%s exists; --force replaces it", path);
	if (crypto_pkey_generate(path, bits) != 0)
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
