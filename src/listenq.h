#ifndef MP_LISTENQ_H
#define MP_LISTENQ_H

/*
 * The listen queue of the listening socket fd (a pool's FastCGI socket: fd 0 of every
 * worker): connections the kernel has accepted that no worker has taken yet, and the most
 * it holds (the backlog). A unix socket is asked through sock_diag (the figures ss -xl
 * shows as Recv-Q and Send-Q), a TCP one through TCP_INFO. Returns 0, or -1 (errno set:
 * not a listening socket, or the kernel would not say).
 */
int listenq_depth(int fd, unsigned *queued, unsigned *backlog);

#endif
