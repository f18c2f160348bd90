#ifndef MP_NETGUARD_H
#define MP_NETGUARD_H

#include <stddef.h>

#include <netinet/in.h>
#include <sys/socket.h>

/*
 * Which IP addresses a webhook may not be sent to: loopback, private, link-local and the
 * other special-purpose ranges, where a merchant's URL would reach services of our own
 * network. Plain classification, no I/O; marketpay-webhookd asks at every connect,
 * marketpayctl when a URL names an address.
 */

/*
 * Why IPv4 address a must not be a webhook target, as a phrase such as "a loopback
 * address", or NULL when it may be.
 */
const char *netguard_why_v4(const struct in_addr *a);

/*
 * The same for IPv6; IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) and 6to4
 * (2002::/16) addresses are judged by the IPv4 address inside.
 */
const char *netguard_why_v6(const struct in6_addr *a);

/*
 * For the address about to be connected (len bytes at sa): 1 with "<address> is <why>"
 * written to msg when it must not be, else 0. Families other than IPv4 and IPv6 are refused.
 */
int netguard_refuse(const struct sockaddr *sa, size_t len, char *msg, size_t msglen);

/*
 * A URL's host as written, without brackets: an IPv6 address, an IPv4 address in any form
 * inet_aton(3) reads (127.1, 0x7f.1, 0177.0.0.1, 2130706433), or a name. Returns why it must
 * not be a target, or NULL. Of names only localhost and names under .localhost are judged
 * (loopback); what others resolve to is judged at connect time.
 */
const char *netguard_why_host(const char *host);

#endif
