#include "err.h"

static const int status_of[ERR__MAX] = {
	200, /* ERR_OK */
	400, /* ERR_INVALID */
	401, /* ERR_AUTH */
	404, /* ERR_NOTFOUND */
	405, /* ERR_METHOD */
	409, /* ERR_CONFLICT */
	411, /* ERR_LENGTH */
	413, /* ERR_TOOBIG */
	415, /* ERR_MEDIA */
	422, /* ERR_MISMATCH */
	500, /* ERR_DB */
	500, /* ERR_NOMEM */
	500, /* ERR_INTERNAL */
	503, /* ERR_UNAVAILABLE */
};

int
err_http_status(enum err e)
{
	if ((int)e < 0 || e >= ERR__MAX)
		return 500;
	return status_of[e];
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
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 411: return "Length Required";
	case 413: return "Payload Too Large";
	case 415: return "Unsupported Media Type";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 503: return "Service Unavailable";
	default:  return status >= 500 ? "Internal Server Error" : "Error";
	}
}
