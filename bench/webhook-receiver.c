/*
 * webhook-receiver [-a ADDR] [-p PORT] [-d MS | -H]: the merchants' webhook endpoints of
 * bench/webhooks. One process, one epoll loop, HTTP/1.1 with keep-alive: each request is
 * read whole (its headers, then Content-Length bytes of body, thrown away) and answered
 * "204 No Content" MS milliseconds later (-d, default 0), or never (-H: the endpoint hangs
 * until the client gives up and closes). One request at a time per connection; pipelined
 * bytes wait in the connection's buffer. Thousands of connections: the open-files limit is
 * raised to its hard limit.
 *
 * Once listening it prints "port N" on stdout (-p 0, the default, takes a free port). SIGUSR1
 * prints one line of counters and starts the maxima again from the current values; SIGTERM
 * or SIGINT prints it and exits 0. A path ending in a number below PATHS (/hook/<merchant
 * id>) is an endpoint of its own: max_per_path is the most requests waiting for their answer
 * at once on one such path, which shows the sender's per-endpoint limit from outside.
 * bench/webhooks compiles it with cc -Wall -Wextra -Werror into its temporary directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUFSZ 8192          /* a request's headers must fit */
#define PATHS 65536         /* endpoints told apart by the number ending their path */
#define EVENTS 256
#define ACCEPT_PAUSE_MS 100 /* out of file descriptors: accept again after this */

enum state {
	ST_HEAD,    /* reading a request's headers */
	ST_BODY,    /* reading (and dropping) its body */
	ST_WAIT,    /* read whole; its answer is due at c->due (or never, with -H) */
	ST_WRITE    /* the answer partly written; the rest when the socket takes it */
};

struct conn {
	int fd;
	enum state st;
	bool close_after;       /* Connection: close, HTTP/1.0, or an error answer */
	unsigned events;        /* what epoll watches for it now */
	char buf[BUFSZ];
	size_t len;             /* bytes in buf */
	unsigned long long body_left;
	long path;              /* the number ending the request's path, or -1 */
	long long due;          /* monotonic ms of the answer */
	const char *out;        /* the answer being written */
	size_t outlen, outoff;
	struct conn *prev, *next;   /* in the queue of answers due, while ST_WAIT with -d */
	bool queued;
};

static const char ok_reply[] = "HTTP/1.1 204 No Content\r\n\r\n";
static const char ok_close_reply[] = "HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n";
static const char bad_reply[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
    "Connection: close\r\n\r\n";
static const char continue_reply[] = "HTTP/1.1 100 Continue\r\n\r\n";

static int ep;
static long delay_ms;
static bool hang;
static struct conn *head, *tail;    /* answers due, oldest first: the delay is fixed */
static unsigned waiting_at[PATHS];
static struct {
	unsigned long long requests, answered, abandoned, bad, accepted;
	long open, max_open, waiting, max_waiting, max_per_path;
} st;

static long long now;    /* monotonic ms, read once a turn of the loop, as nginx caches it */

static void
tick(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
		now = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
report(void)
{
	long i, m = 0;

	printf("requests=%llu answered=%llu abandoned=%llu bad=%llu accepted=%llu open=%ld "
	    "max_open=%ld waiting=%ld max_waiting=%ld max_per_path=%ld\n", st.requests,
	    st.answered, st.abandoned, st.bad, st.accepted, st.open, st.max_open, st.waiting,
	    st.max_waiting, st.max_per_path);
	fflush(stdout);
	/* The maxima start again from what holds now. */
	for (i = 0; i < PATHS; i++)
		if (waiting_at[i] > (unsigned)m)
			m = (long)waiting_at[i];
	st.max_open = st.open;
	st.max_waiting = st.waiting;
	st.max_per_path = m;
}

/* Watches c for events ev, telling epoll only when that changes. */
static void
watch(struct conn *c, unsigned ev)
{
	struct epoll_event e;

	if (c->events == ev)
		return;
	memset(&e, 0, sizeof(e));
	e.events = ev;
	e.data.ptr = c;
	if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e) == 0)
		c->events = ev;
}

static void
unqueue(struct conn *c)
{
	if (!c->queued)
		return;
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	else
		tail = c->prev;
	c->prev = c->next = NULL;
	c->queued = false;
}

/* A request of c no longer waits for its answer (answered, or its connection gone). */
static void
unwait(struct conn *c)
{
	st.waiting--;
	if (c->path >= 0)
		waiting_at[c->path]--;
}

static void
conn_close(struct conn *c)
{
	if (c->st == ST_WAIT) {
		unqueue(c);
		unwait(c);
		st.abandoned++;
	}
	close(c->fd);
	st.open--;
	free(c);
}

/* The number ending the path of request line s (up to '?' or ' '), or -1. */
static long
path_number(const char *s, size_t n)
{
	const char *sp = memchr(s, ' ', n), *end;
	long v = 0, mul = 1;

	if (sp == NULL)
		return -1;
	n -= (size_t)(sp + 1 - s);
	s = sp + 1;
	for (end = s; end < s + n && *end != ' ' && *end != '?'; end++)
		;
	if (end == s || end[-1] < '0' || end[-1] > '9')
		return -1;
	while (end > s && end[-1] >= '0' && end[-1] <= '9' && mul < PATHS) {
		v += (end[-1] - '0') * mul;
		mul *= 10;
		end--;
	}
	return v < PATHS && (end == s || end[-1] < '0' || end[-1] > '9') ? v : -1;
}

/* Does header line l (n bytes) have name name? Then *val is its value. */
static bool
header_is(const char *l, size_t n, const char *name, const char **val, size_t *vlen)
{
	size_t k = strlen(name);

	if (n <= k || l[k] != ':' || strncasecmp(l, name, k) != 0)
		return false;
	for (l += k + 1, n -= k + 1; n > 0 && (*l == ' ' || *l == '\t'); l++, n--)
		;
	*val = l;
	*vlen = n;
	return true;
}

static bool
has_token(const char *v, size_t n, const char *tok)
{
	size_t k = strlen(tok), i;

	for (i = 0; i + k <= n; i++)
		if (strncasecmp(v + i, tok, k) == 0)
			return true;
	return false;
}

/*
 * The headers of c's request, n bytes up to and with the empty line: sets close_after,
 * body_left and path. false when the request is malformed.
 */
static bool
parse_head(struct conn *c, size_t n)
{
	const char *p = c->buf, *end = c->buf + n, *eol, *v;
	size_t vlen;
	bool http10, keep = false, clen = false, cont = false;
	char num[24];

	if ((eol = memmem(p, (size_t)(end - p), "\r\n", 2)) == NULL || eol - p < 14 ||
	    memcmp(eol - 8, "HTTP/1.", 7) != 0)
		return false;
	http10 = eol[-1] == '0';
	c->path = path_number(p, (size_t)(eol - p));
	c->body_left = 0;
	c->close_after = false;
	for (p = eol + 2; p < end && (eol = memmem(p, (size_t)(end - p), "\r\n", 2)) != NULL &&
	    eol > p; p = eol + 2) {
		if (header_is(p, (size_t)(eol - p), "content-length", &v, &vlen)) {
			if (vlen == 0 || vlen >= sizeof(num) || strspn(v, "0123456789") < vlen)
				return false;
			memcpy(num, v, vlen);
			num[vlen] = '\0';
			c->body_left = strtoull(num, NULL, 10);
			clen = true;
		} else if (header_is(p, (size_t)(eol - p), "transfer-encoding", &v, &vlen)) {
			if (!has_token(v, vlen, "identity"))
				return false;   /* chunked bodies are not read here */
		} else if (header_is(p, (size_t)(eol - p), "connection", &v, &vlen)) {
			c->close_after = has_token(v, vlen, "close");
			keep = has_token(v, vlen, "keep-alive");
		} else if (header_is(p, (size_t)(eol - p), "expect", &v, &vlen))
			cont = has_token(v, vlen, "100-continue");
	}
	if (http10 && !keep)
		c->close_after = true;
	/* Best effort: a fresh socket takes these 25 bytes whole. */
	if (cont && clen && c->body_left > 0 &&
	    send(c->fd, continue_reply, sizeof(continue_reply) - 1, MSG_NOSIGNAL) < 0)
		return false;
	return true;
}

/* What epoll should watch c for in its state. */
static unsigned
interest(const struct conn *c)
{
	if (c->st == ST_WRITE)
		return EPOLLOUT | EPOLLRDHUP;
	/* A full buffer (a pipelined request behind the one waiting): only the peer's close. */
	return c->len == sizeof(c->buf) ? EPOLLRDHUP : EPOLLIN | EPOLLRDHUP;
}

static void advance(struct conn *c);

/*
 * Writes what is left of c's answer; once all of it went, the next request of the
 * connection, or its end.
 */
static void
flush_out(struct conn *c)
{
	ssize_t w;

	while (c->outoff < c->outlen) {
		w = send(c->fd, c->out + c->outoff, c->outlen - c->outoff, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			c->st = ST_WRITE;
			watch(c, interest(c));
			return;
		}
		if (w <= 0) {
			conn_close(c);
			return;
		}
		c->outoff += (size_t)w;
	}
	if (c->out != bad_reply)
		st.answered++;
	if (c->close_after) {
		conn_close(c);
		return;
	}
	c->st = ST_HEAD;
	advance(c);
}

/* Sends answer a (n bytes) to c, then goes on as flush_out does. */
static void
answer(struct conn *c, const char *a, size_t n)
{
	c->out = a;
	c->outlen = n;
	c->outoff = 0;
	flush_out(c);
}

/* The 204, with the connection's end said when it ends after it. */
static void
answer_ok(struct conn *c)
{
	if (c->close_after)
		answer(c, ok_close_reply, sizeof(ok_close_reply) - 1);
	else
		answer(c, ok_reply, sizeof(ok_reply) - 1);
}

/* The request of c is read whole: count it, and answer now, when due, or never. */
static void
complete(struct conn *c)
{
	st.requests++;
	if (delay_ms == 0 && !hang) {
		answer_ok(c);
		return;
	}
	c->st = ST_WAIT;
	if (++st.waiting > st.max_waiting)
		st.max_waiting = st.waiting;
	if (c->path >= 0 && ++waiting_at[c->path] > (unsigned)st.max_per_path)
		st.max_per_path = (long)waiting_at[c->path];
	if (hang)
		return;
	c->due = now + delay_ms;
	c->prev = tail;
	c->next = NULL;
	if (tail != NULL)
		tail->next = c;
	else
		head = c;
	tail = c;
	c->queued = true;
}

/* Takes n bytes off the front of c's buffer. */
static void
consume(struct conn *c, size_t n)
{
	memmove(c->buf, c->buf + n, c->len - n);
	c->len -= n;
}

/* Parses what c's buffer holds as far as its state lets it. */
static void
advance(struct conn *c)
{
	const char *e;
	size_t n;

	for (;;) {
		if (c->st == ST_HEAD) {
			if ((e = memmem(c->buf, c->len, "\r\n\r\n", 4)) == NULL) {
				if (c->len == sizeof(c->buf))
					goto bad;
				break;
			}
			n = (size_t)(e + 4 - c->buf);
			if (!parse_head(c, n))
				goto bad;
			consume(c, n);
			c->st = ST_BODY;
		}
		if (c->st == ST_BODY) {
			n = c->body_left < c->len ? (size_t)c->body_left : c->len;
			consume(c, n);
			c->body_left -= n;
			if (c->body_left > 0)
				break;
			complete(c);
			return;     /* complete() or answer() goes on with c, or closed it */
		}
		break;
	}
	watch(c, interest(c));
	return;
bad:
	st.bad++;
	c->close_after = true;
	answer(c, bad_reply, sizeof(bad_reply) - 1);
}

/* Reads what c's peer sent (ev: what epoll said); its close ends the connection. */
static void
on_readable(struct conn *c, unsigned ev)
{
	ssize_t r;

	/* Nothing more can be read into a full buffer: a peer that is done is gone. */
	if (c->len == sizeof(c->buf) && (ev & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))) {
		conn_close(c);
		return;
	}
	while (c->len < sizeof(c->buf)) {
		r = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			break;
		if (r <= 0) {
			conn_close(c);
			return;
		}
		c->len += (size_t)r;
	}
	if (c->st == ST_HEAD || c->st == ST_BODY)
		advance(c);
	else
		watch(c, interest(c));
}

/* Accepts every connection waiting. false when out of file descriptors. */
static bool
accept_all(int lfd)
{
	struct epoll_event e;
	struct conn *c;
	int fd, one = 1;

	for (;;) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return !(errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM);
		if ((c = calloc(1, sizeof(*c))) == NULL) {
			close(fd);
			return false;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->fd = fd;
		c->path = -1;
		c->events = EPOLLIN | EPOLLRDHUP;
		memset(&e, 0, sizeof(e));
		e.events = c->events;
		e.data.ptr = c;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) != 0) {
			close(fd);
			free(c);
			return false;
		}
		st.accepted++;
		if (++st.open > st.max_open)
			st.max_open = st.open;
	}
}

static int
listen_on(const char *addr, int port)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd, one = 1;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		fprintf(stderr, "webhook-receiver: bad address %s\n", addr);
		return -1;
	}
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, 4096) != 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
		perror("webhook-receiver: listen");
		return -1;
	}
	printf("port %d\n", ntohs(sa.sin_port));
	fflush(stdout);
	return fd;
}

static void
usage(void)
{
	fprintf(stderr, "usage: webhook-receiver [-a ADDR] [-p PORT] [-d MS | -H]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	struct epoll_event e, evs[EVENTS];
	struct signalfd_siginfo si;
	struct rlimit rl;
	const char *addr = "127.0.0.1";
	long long paused_until = 0;
	sigset_t sigs;
	int ch, port = 0, lfd, sfd, n, i, timeout;
	struct conn *c;

	while ((ch = getopt(argc, argv, "a:p:d:H")) != -1) {
		switch (ch) {
		case 'a': addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'd': delay_ms = atol(optarg); break;
		case 'H': hang = true; break;
		default: usage();
		}
	}
	if (optind != argc || delay_ms < 0 || port < 0 || port > 65535)
		usage();
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	signal(SIGPIPE, SIG_IGN);
	if (sigprocmask(SIG_BLOCK, &sigs, NULL) != 0 ||
	    (sfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC)) < 0 ||
	    (ep = epoll_create1(EPOLL_CLOEXEC)) < 0 || (lfd = listen_on(addr, port)) < 0) {
		perror("webhook-receiver");
		return 1;
	}
	memset(&e, 0, sizeof(e));
	e.events = EPOLLIN;
	e.data.ptr = &lfd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &e) != 0)
		return 1;
	e.data.ptr = &sfd;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &e) != 0)
		return 1;
	for (;;) {
		tick();
		timeout = -1;
		if (head != NULL)
			timeout = head->due > now ? (int)(head->due - now) : 0;
		if (paused_until > 0 && (timeout < 0 || paused_until - now < timeout))
			timeout = paused_until > now ? (int)(paused_until - now) : 0;
		n = epoll_wait(ep, evs, EVENTS, timeout);
		if (n < 0 && errno != EINTR) {
			perror("webhook-receiver: epoll_wait");
			return 1;
		}
		tick();
		for (i = 0; i < n; i++) {
			if (evs[i].data.ptr == &sfd) {
				while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
					report();
					if (si.ssi_signo != SIGUSR1)
						return 0;
				}
			} else if (evs[i].data.ptr == &lfd) {
				if (!accept_all(lfd)) {
					/* Out of descriptors: stop accepting for a while. */
					epoll_ctl(ep, EPOLL_CTL_DEL, lfd, NULL);
					paused_until = now + ACCEPT_PAUSE_MS;
				}
			} else {
				c = evs[i].data.ptr;
				if (c->st == ST_WRITE && (evs[i].events & EPOLLOUT))
					flush_out(c);
				else if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
					on_readable(c, evs[i].events);
			}
		}
		tick();
		while (head != NULL && head->due <= now) {
			c = head;
			unqueue(c);
			unwait(c);
			c->st = ST_WRITE;   /* no longer waiting, should the connection end now */
			answer_ok(c);
		}
		if (paused_until > 0 && now >= paused_until) {
			e.events = EPOLLIN;
			e.data.ptr = &lfd;
			if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &e) == 0)
				paused_until = 0;
		}
	}
}
