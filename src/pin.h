#ifndef MP_PIN_H
#define MP_PIN_H

#include <stdbool.h>

#define PIN_MIN 4
#define PIN_MAX 12

/* A PIN is 4 to 12 decimal digits. */
bool pin_format_ok(const char *pin);

/*
 * The stored form of a PIN: HMAC-SHA256 under the pepper in pepper_file, as bytea input
 * text "\\x<64 hex>" in digest[67]. Returns 0, or -1 when the pepper file cannot be read
 * or the PIN is malformed. The PIN itself is never stored or logged.
 */
int pin_digest(const char *pepper_file, const char *pin, char digest[67]);

#endif
