#ifndef MP_SQLSTATE_H
#define MP_SQLSTATE_H

/*
 * The service's own SQLSTATEs: the one list that sql/ raises and C matches. A unit test
 * (tests/unit/check_sqlstate.c) fails when a code in sql/ is missing here or one here is
 * raised nowhere.
 */
#define SQLSTATE_ACCOUNT_UNUSABLE  "MP001"  /* mp_post: an account unknown or not active */
#define SQLSTATE_CURRENCY          "MP002"  /* mp_post: an account of another currency */
#define SQLSTATE_FUNDS             "MP003"  /* mp_post: a balance would go below zero */
#define SQLSTATE_MALFORMED_POSTING "MP004"  /* mp_post: accounts and amounts do not pair up */
#define SQLSTATE_NO_ACCOUNT        "MP011"  /* mp_transfer: no such vendor account */
#define SQLSTATE_OWN_ACCOUNT       "MP012"  /* mp_transfer: the merchant's own account */
#define SQLSTATE_NOT_VENDOR        "MP013"  /* mp_transfer: not a vendor account */
#define SQLSTATE_NOT_ACTIVE        "MP014"  /* mp_transfer: frozen or closed */
#define SQLSTATE_VENDOR_CURRENCY   "MP015"  /* mp_transfer: another currency */
#define SQLSTATE_NO_ENVIRONMENT    "MP020"  /* mp_environment: never migrated */
#define SQLSTATE_NOT_SANDBOX       "MP021"  /* mp_pay_test_card: a production database */
/* Refunds and reversals: MP030 is a 404; the others are 400s whose message is the API's. */
#define SQLSTATE_NOT_FOUND         "MP030"  /* no such session or transfer of the merchant
                                             * (mp_rotate_webhook_secret: no such merchant) */
#define SQLSTATE_NOT_PAID          "MP031"  /* mp_refund_session: the session is not paid */
#define SQLSTATE_REFUND_LEFT       "MP032"  /* mp_refund_session: above what is left */
#define SQLSTATE_MERCHANT_FUNDS    "MP033"  /* the merchant's balance short, or frozen */
#define SQLSTATE_WALLET_UNUSABLE   "MP034"  /* mp_refund_session: the wallet frozen or closed */
#define SQLSTATE_NO_TRANSFER       "MP035"  /* reverse_transfers: no such transfer */
#define SQLSTATE_REVERSAL_LEFT     "MP036"  /* above what is left to reverse */
#define SQLSTATE_VENDOR_FUNDS      "MP037"  /* the vendor's balance short, or not active */
#define SQLSTATE_NOT_OPEN          "MP038"  /* mp_expire_session: the session is not open */
/* Lists (sql/011_lists.sql): a 400 whose message names the parameter. */
#define SQLSTATE_NO_CURSOR         "MP039"  /* mp_list: the cursor is not the merchant's item */
/* Redelivery (sql/012_events_api.sql): a 400, a 429 with Retry-After, a 409. */
#define SQLSTATE_NO_ENDPOINT       "MP040"  /* mp_redeliver_event: no webhook URL */
#define SQLSTATE_RATE_LIMITED      "MP041"  /* mp_redeliver_event: DETAIL the seconds to wait */
#define SQLSTATE_IN_FLIGHT         "MP042"  /* mp_redeliver_event: being delivered now */
/* Secret rotation (sql/015_secret_rotation.sql): a 400. */
#define SQLSTATE_NO_SECRET         "MP043"  /* mp_rotate_webhook_secret: no secret yet */
/* Account status (sql/022_account_status.sql): marketpayctl prints the message. */
#define SQLSTATE_STATUS_REFUSED    "MP050"  /* closed is final; close at zero; not the funding
                                             * account */

#endif
