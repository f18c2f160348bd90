#ifndef MP_LISTS_H
#define MP_LISTS_H

#include "route.h"

/*
 * The merchant API's collections, each in the list convention of list.h: GET sessions
 * (filters user_id, status), refunds (session_id), transfers (account_number) and
 * balance-transactions (type).
 */
route_handler sessions_list;
route_handler refunds_list;
route_handler transfers_list;
route_handler balance_transactions_list;

/* GET transfers/{id}: the merchant's own transfer, else 404. */
route_handler transfer_get;

/* GET balance: the settlement account's balance ("0.00" and no account before a payment). */
route_handler balance_get;

#endif
