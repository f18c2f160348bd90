#ifndef MP_WEBHOOK_URL_H
#define MP_WEBHOOK_URL_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/*
 * Checks url as a merchant's webhook URL before marketpayctl stores it: the rules of
 * valid_http_url, the scheme in lower case as the database's CHECK wants it, https in
 * production, a well-formed host and port, and unless cfg's webhook_allow_private a host
 * that is not an internal address or localhost (netguard_why_host). Returns true, or false
 * with a phrase to follow the option's name ("must be an https:// URL in production") in msg.
 */
bool webhook_url_check(const char *url, const struct config *cfg, char *msg, size_t msglen);

#endif
