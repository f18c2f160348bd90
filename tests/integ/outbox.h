#ifndef MP_TEST_OUTBOX_H
#define MP_TEST_OUTBOX_H

/* The webhook outbox as the webhook suites see it (Check assertions inside). */

#define WAIT_MS 15000

/* Inserts an event as the payment code does; returns its id (static buffer). */
const char *insert_event(const char *merchant_id, const char *body);

/* Polls sql (one parameter, may be NULL) until it gives want; fails the test after ms. */
void wait_value(const char *sql, const char *param, const char *want, long ms);

/* Waits until event id has status. */
void wait_status(const char *id, const char *status);

/* Waits until no event is pending: a case that stops a daemon must not catch one. */
void quiet(void);

/* A TCP socket listening on a free loopback port (*port), for endpoints the cases play. */
int loopback_listener(int *port, int backlog);

/* The environment variable name, set by tests/integration.sh; exits when it is not. */
const char *env(const char *name);

/* True when file path holds needle (in a line), waiting up to ms. */
int file_has(const char *path, const char *needle, long ms);

/* The stack's config with line added (a later key wins) as file name; its path, static. */
const char *config_plus(const char *name, const char *line);

#endif
