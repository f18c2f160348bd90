#ifndef MP_WORKER_SQL_H
#define MP_WORKER_SQL_H

#include "db.h"

/*
 * Every statement the workers run, prepared once per connection (the table in
 * worker_sql.c), and after each one that returns rows the enum of its result columns.
 */
enum worker_stmt {
	DB_HEALTH,            /* no column read */
	DB_AUTH_KEY,
	DB_SESSION_CREATE,
	DB_SESSION_GET,
	DB_SESSION_GET_KEY,
	DB_LOCK_TIMEOUT,      /* no column read */
	DB_IDEM_LOCK,         /* no column read */
	DB_IDEM_GET,
	DB_IDEM_PUT,          /* no rows */
	DB_IDEM_LOCK_KEY,     /* no column read */
	DB_IDEM_GET_KEY,
	DB_CHECKOUT_GET,
	DB_PAY_WALLET,
	DB_PAY_TEST_CARD,
	DB_CANCEL,
	DB_TRANSFER_SEND,
	DB_REFUND_CREATE,
	DB_REFUND_GET,
	DB_REFUND_GET_KEY,
	DB_TRANSFER_GET_KEY,
	DB_EVENT_GET_KEY,
	DB_BALANCE_KEY,
	DB_REVERSAL_CREATE,
	DB_SESSION_EXPIRE,
	DB_TRANSFER_GET,
	DB_LIST,
	DB_LIST_KEY,
	DB_LIST_CSV,
	DB_BALANCE,
	DB_EVENT_GET,
	DB_EVENT_REDELIVER,
	DB_SECRET_ROTATE,
	DB_WEBHOOK_BACKLOG,
	DB_STMT__MAX
};

/* DB_AUTH_KEY */
enum auth_key_col { AUTH_KEY_MERCHANT, AUTH_KEY_NAME, AUTH_KEY_CURRENCY, AUTH_KEY_NOTED };

/* DB_SESSION_CREATE */
enum session_create_col { SESSION_CREATE_ID, SESSION_CREATE_EXPIRES, SESSION_CREATE_MERCHANT };

/*
 * DB_SESSION_GET: the session as the API shows it (mp_session_json), without its url, in
 * enum intent_col's one column
 */

/*
 * DB_IDEM_GET: the stored request hash (hex), HTTP status and body, and whether the body is
 * sealed ("t": base64 of the reply sealed under secrets_key_file)
 */
enum idem_get_col { IDEM_GET_HASH, IDEM_GET_STATUS, IDEM_GET_BODY, IDEM_GET_SEALED };

/*
 * DB_IDEM_GET_KEY: the columns of DB_AUTH_KEY, then those of DB_IDEM_GET (NULL: nothing
 * stored); no row: the key is refused
 */
enum idem_get_key_col { IDEM_GET_KEY_STORED = AUTH_KEY_NOTED + 1 };

/*
 * DB_CHECKOUT_GET: one row per item of the session, in order, the session's columns repeated
 * on each (a session without items would be one row, its item columns NULL)
 */
enum checkout_get_col {
	CHECKOUT_GET_ID,
	CHECKOUT_GET_STATUS,
	CHECKOUT_GET_AMOUNT,
	CHECKOUT_GET_CURRENCY,
	CHECKOUT_GET_SUCCESS_URL,
	CHECKOUT_GET_FAILURE_URL,
	CHECKOUT_GET_USER,
	CHECKOUT_GET_EXPIRES,     /* "YYYY-MM-DD HH24:MI", UTC */
	CHECKOUT_GET_MERCHANT,    /* the merchant's name */
	CHECKOUT_GET_REASON,
	CHECKOUT_GET_LOCALE,      /* the merchant's fixed language (fa_AF), or NULL */
	CHECKOUT_GET_ITEM_NAME,
	CHECKOUT_GET_ITEM_PRICE
};

/*
 * DB_PAY_WALLET and DB_PAY_TEST_CARD: the outcome, the ledger transaction, and the PIN
 * lock (until when: ISO 8601, "" for the hard lock, NULL for none; seconds left).
 */
enum pay_col {
	PAY_COL_OUTCOME,
	PAY_COL_TRANSACTION,
	PAY_COL_LOCKED_UNTIL,
	PAY_COL_LOCKED_SECONDS
};

/*
 * DB_REFUND_CREATE, DB_REFUND_GET, DB_REVERSAL_CREATE, DB_TRANSFER_GET, DB_BALANCE,
 * DB_EVENT_GET, DB_EVENT_REDELIVER: the object as the API shows it
 */
enum intent_col { INTENT_OBJECT };

/* DB_SECRET_ROTATE: when the previous secret stops signing (ISO 8601), NULL without a window */
enum secret_rotate_col { SECRET_ROTATE_PREVIOUS_UNTIL };

/* DB_CANCEL: the session's status afterwards */
enum cancel_col { CANCEL_STATUS };

/*
 * DB_TRANSFER_SEND: the outcome with its detail and message, the PIN lock as in pay_col,
 * then per vendor its transfer id and amount, and the transaction date and the transfers'
 * group id (every row).
 */
enum transfer_send_col {
	TRANSFER_SEND_OUTCOME,
	TRANSFER_SEND_DETAIL,
	TRANSFER_SEND_MESSAGE,
	TRANSFER_SEND_LOCKED_UNTIL,
	TRANSFER_SEND_LOCKED_SECONDS,
	TRANSFER_SEND_ID,
	TRANSFER_SEND_AMOUNT,
	TRANSFER_SEND_DATE,
	TRANSFER_SEND_GROUP
};

/* DB_LIST: one row per item of the page, newest first (one more than the page shows) */
enum list_col { LIST_OBJECT };

/*
 * DB_LIST_KEY: DB_LIST with the API key looked up in the same statement: the columns of
 * DB_AUTH_KEY on every row, then the item (NULL on the one row of an empty page); no row:
 * the key is refused
 */
enum list_key_col { LIST_KEY_OBJECT = AUTH_KEY_NOTED + 1 };

/*
 * DB_SESSION_GET_KEY, DB_REFUND_GET_KEY, DB_TRANSFER_GET_KEY, DB_EVENT_GET_KEY, DB_BALANCE_KEY:
 * the columns of DB_AUTH_KEY, then the object (NULL: none of the key's merchant by that id);
 * no row: the key is refused
 */
enum intent_key_col { INTENT_KEY_OBJECT = AUTH_KEY_NOTED + 1 };

/* DB_LIST_CSV: a balance transaction's fields, in the order of its CSV */
enum list_csv_col {
	LIST_CSV_ID,
	LIST_CSV_TYPE,
	LIST_CSV_AMOUNT,
	LIST_CSV_BALANCE_AFTER,
	LIST_CSV_CURRENCY,
	LIST_CSV_SOURCE,
	LIST_CSV_TRANSACTION,
	LIST_CSV_CREATED
};

/* DB_WEBHOOK_BACKLOG: the metrics endpoint's webhook figures */
enum webhook_backlog_col {
	WEBHOOK_BACKLOG_PENDING,
	WEBHOOK_BACKLOG_OLDEST_MS,
	WEBHOOK_BACKLOG_DEAD
};

/* The workers' statement table, indexed by enum worker_stmt (for db_set_statements). */
extern const struct db_sql worker_sql[DB_STMT__MAX];

#endif
