#include "err.h"

/* Indexed by enum err: the status a handler replies with, and the message when none better. */
static const struct {
	int status;
	const char *message;
} errs[ERR__MAX] = {
	{ 200, "ok" },                                                   /* ERR_OK */
	{ 400, "invalid request" },                                      /* ERR_INVALID */
	{ 401, "Invalid or missing API key." },                          /* ERR_AUTH */
	{ 404, "not found" },                                            /* ERR_NOTFOUND */
	{ 405, "method not allowed" },                                   /* ERR_METHOD */
	{ 409, "a request with this Idempotency-Key is still in progress; retry later" },
	                                                                 /* ERR_CONFLICT */
	{ 411, "Content-Length is required" },                           /* ERR_LENGTH */
	{ 413, "request body too large" },                               /* ERR_TOOBIG */
	{ 415, "Content-Type must be application/json" },                /* ERR_MEDIA */
	{ 422, "Idempotency-Key was already used with a different request" }, /* ERR_MISMATCH */
	{ 500, "internal error" },                                       /* ERR_DB */
	{ 500, "internal error" },                                       /* ERR_NOMEM */
	{ 500, "internal error" },                                       /* ERR_INTERNAL */
	{ 503, "service temporarily unavailable; retry later" },         /* ERR_UNAVAILABLE */
};

int
err_http_status(enum err e)
{
	if ((int)e < 0 || e >= ERR__MAX)
		return 500;
	return errs[e].status;
}

const char *
err_message(enum err e)
{
	if ((int)e < 0 || e >= ERR__MAX)
		return "internal error";
	return errs[e].message;
}

const char *
err_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 303: return "See Other";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 411: return "Length Required";
	case 413: return "Payload Too Large";
	case 414: return "URI Too Long";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default:  return status >= 500 ? "Internal Server Error" : "Error";
	}
}
