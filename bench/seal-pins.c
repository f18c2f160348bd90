/*
 * seal-pins PEM ROUNDS < PINS: encrypted transfer PINs for bench/transfer, made the way
 * merchants make them (tests/load/seal.c's seal_pin: base64 of RSA-OAEP-SHA256 of
 * "PIN:UNIX_TIME:NONCE", the time now and a fresh random nonce of 32 hex digits). PINS has
 * one PIN a line (one per merchant); the output has ROUNDS rounds of one line per input PIN,
 * in input order, each with its own nonce: a nonce is accepted once, so every request of a
 * run needs its own line. bench/transfer compiles it (cc ... -lcrypto) into its temporary
 * directory; the lines are valid for pin_max_age (300 s by default) after they are made.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seal.h"

#define MAXPINS 1024

int
main(int argc, char **argv)
{
	static char pins[MAXPINS][16];
	char *pem = NULL, out[1024], line[64];
	size_t npem = 0, n = 0, i;
	long rounds, r;
	EVP_PKEY *k;
	FILE *f;

	if (argc != 3 || (rounds = strtol(argv[2], NULL, 10)) < 1) {
		fprintf(stderr, "usage: seal-pins PEM ROUNDS < PINS\n");
		return 2;
	}
	if ((f = fopen(argv[1], "r")) == NULL || getdelim(&pem, &npem, '\0', f) < 0) {
		perror(argv[1]);
		return 1;
	}
	fclose(f);
	if ((k = seal_load(pem)) == NULL) {
		fprintf(stderr, "%s: not a public key\n", argv[1]);
		return 1;
	}
	while (fgets(line, sizeof(line), stdin) != NULL) {
		line[strcspn(line, "\r\n")] = '\0';
		if (n == MAXPINS || strlen(line) < 4 || strlen(line) > 12 ||
		    strspn(line, "0123456789") != strlen(line)) {
			fprintf(stderr, "seal-pins: at most %d PINs of 4 to 12 digits\n", MAXPINS);
			return 1;
		}
		strcpy(pins[n++], line);
	}
	for (r = 0; r < rounds; r++)
		for (i = 0; i < n; i++) {
			if (seal_pin(k, pins[i], out, sizeof(out)) != 0) {
				fprintf(stderr, "seal-pins: encryption failed\n");
				return 1;
			}
			puts(out);
		}
	EVP_PKEY_free(k);
	free(pem);
	return ferror(stdout) || fflush(stdout) != 0;
}
