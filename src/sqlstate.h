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

#endif
