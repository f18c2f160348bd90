#ifndef MP_PIN_H
#define MP_PIN_H

#include <stdbool.h>
#include <stddef.h>

#define PIN_MIN 4
#define PIN_MAX 12
#define PIN_DIGEST_LEN 67      /* "\\x" + 64 hex digits + NUL: bytea input text */
#define PIN_NONCE_MIN 16
#define PIN_NONCE_MAX 64

/* A PIN is 4 to 12 decimal digits. */
bool pin_format_ok(const char *pin);

/*
 * The stored forms of a PIN, as bytea input text "\\x<64 hex>": digest is the HMAC-SHA256
 * under the pepper in pepper_file over the owner's identity and the PIN (owner such as
 * "account:CU1234567890" or "merchant:42"), so equal PINs of two owners differ; legacy (may
 * be NULL) is the older HMAC of the PIN alone, still stored for PINs set before. Returns 0,
 * or -1 (both outputs "") when the pepper cannot be read or the PIN is malformed. The PIN
 * itself is never stored or logged.
 */
int pin_digest(const char *pepper_file, const char *owner, const char *pin,
    char digest[PIN_DIGEST_LEN], char legacy[PIN_DIGEST_LEN]);

/* The decrypted transfer PIN: "PIN:UNIX_SECONDS:NONCE", nothing before or after. */
struct pin_sealed {
	char pin[PIN_MAX + 1];
	long long issued_at;
	char nonce[PIN_NONCE_MAX + 1];
};

/*
 * Parses the plaintext of an encrypted transfer PIN (len bytes, not NUL-terminated): 4-12
 * digits, ':', the Unix time it was made (1-12 digits), ':', a nonce of 16-64 characters
 * [A-Za-z0-9_-]. Returns true and fills out, or false for anything else (trailing bytes, NUL).
 */
bool pin_parse_sealed(const unsigned char *p, size_t len, struct pin_sealed *out);

#endif
