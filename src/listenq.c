/* A listening socket's queue: sock_diag for unix sockets, TCP_INFO for TCP. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include "listenq.h"

static int
unix_depth(int fd, unsigned *queued, unsigned *backlog)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req req;
	} msg;
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	union {
		struct nlmsghdr nh;
		char buf[8192];
	} reply;
	struct stat st;
	struct nlmsghdr *h;
	struct unix_diag_msg *m;
	struct rtattr *a;
	ssize_t got;
	unsigned int n;   /* unsigned, as NLMSG_OK compares it with nlmsg_len */
	int sk, rc = -1, len;

	if (fstat(fd, &st) != 0)
		return -1;
	if ((sk = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) < 0)
		return -1;
	memset(&msg, 0, sizeof(msg));
	msg.nh.nlmsg_len = sizeof(msg);
	msg.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	msg.nh.nlmsg_flags = NLM_F_REQUEST;
	msg.req.sdiag_family = AF_UNIX;
	msg.req.udiag_states = ~0u;
	msg.req.udiag_ino = (unsigned)st.st_ino;
	msg.req.udiag_show = UDIAG_SHOW_RQLEN;
	msg.req.udiag_cookie[0] = msg.req.udiag_cookie[1] = ~0u;  /* no cookie to match */
	if (sendto(sk, &msg, sizeof(msg), 0, (struct sockaddr *)&nl, sizeof(nl)) < 0 ||
	    (got = recv(sk, &reply, sizeof(reply), 0)) < 0)
		goto out;
	n = (unsigned int)got;
	errno = ENOENT;
	for (h = &reply.nh; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type == NLMSG_ERROR) {
			struct nlmsgerr *e = NLMSG_DATA(h);

			errno = -e->error;
			goto out;
		}
		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY)
			continue;
		m = NLMSG_DATA(h);
		/* Of another socket the two figures mean its buffers, not a queue. */
		if (m->udiag_state != TCP_LISTEN) {
			errno = EINVAL;
			goto out;
		}
		len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof(*m)));
		for (a = (struct rtattr *)(m + 1); RTA_OK(a, len); a = RTA_NEXT(a, len))
			if (a->rta_type == UNIX_DIAG_RQLEN) {
				const struct unix_diag_rqlen *q = RTA_DATA(a);

				/* A listening socket: the queued connections, and its backlog. */
				*queued = q->udiag_rqueue;
				*backlog = q->udiag_wqueue;
				rc = 0;
				goto out;
			}
	}
out:
	close(sk);
	return rc;
}

int
listenq_depth(int fd, unsigned *queued, unsigned *backlog)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct tcp_info ti;
	socklen_t tl = sizeof(ti);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
		return -1;
	if (ss.ss_family == AF_UNIX)
		return unix_depth(fd, queued, backlog);
	if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6) {
		errno = EAFNOSUPPORT;
		return -1;
	}
	/* For a listening TCP socket the kernel puts its queue in these two fields. */
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) != 0)
		return -1;
	if (ti.tcpi_state != TCP_LISTEN) {
		errno = EINVAL;
		return -1;
	}
	*queued = ti.tcpi_unacked;
	*backlog = ti.tcpi_sacked;
	return 0;
}
