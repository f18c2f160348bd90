#!/usr/bin/env bash
# events_delivered (tests/load-checks.sh), the wait of tests/faults.sh and tests/ha.sh for
# the events of an outage, against a real stack with events still being made, as under
# their load:
#   - a receiver that answers each delivery after 200 ms, so that some events are always on
#     their way; a stream of 20 events a second for the merchant
#   - the events made before the wait are all delivered within it, and it says so, however
#     many of the events made meanwhile are still on their way (a cutoff moving with the
#     clock never saw none on their way: CI failed faults.sh on it)
#   - with webhookd stopped, the wait ends in failure, naming the events left
set -euo pipefail
srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=$(cd "${top_builddir:-.}" && pwd)
# shellcheck source=tests/lib.sh
. "$srcdir/tests/lib.sh"
export LC_ALL=C MP_SRCDIR="$srcdir" MP_BUILDDIR="$builddir" MP_FAST_PG=1 MP_WORKERS=1
export MP_CONF_EXTRA="webhook_poll_interval = 1"
stack="$srcdir/tests/stack.sh"
receiver_pid="" stream_pid=""
own_cleanup() {
	[ -z "$stream_pid" ] || kill -KILL "$stream_pid" 2>/dev/null || true
	[ -z "$receiver_pid" ] || kill -KILL "$receiver_pid" 2>/dev/null || true
}
own_stack events-delivered
# shellcheck source=tests/load-checks.sh
. "$srcdir/tests/load-checks.sh"

# The receiver: one process per connection, each request answered 204 after 200 ms.
rport=$(free_port)
perl -MIO::Socket::INET -MTime::HiRes=sleep -e '
	$SIG{CHLD} = "IGNORE";
	my $s = IO::Socket::INET->new(LocalAddr => "127.0.0.1", LocalPort => $ARGV[0],
		Listen => 128, ReuseAddr => 1) or die "receiver: $!\n";
	while (my $c = $s->accept) {
		if (fork) { close $c; next; }
		while (1) {
			my $len = 0;
			while (defined(my $l = <$c>)) {
				$len = $1 if $l =~ /^content-length:\s*(\d+)/i;
				last if $l eq "\r\n";
			}
			last if eof($c) && !$len;
			read($c, my $body, $len) == $len or last;
			sleep 0.2;
			print $c "HTTP/1.1 204 No Content\r\n\r\n";
			$c->flush;
		}
		exit 0;
	}' "$rport" &
receiver_pid=$!
disown "$receiver_pid"
wait_listening "$rport" "events-delivered: the receiver" || exit 1

merchant=$(ctl merchant create --name "Events delivered")
ctl merchant webhook "$merchant" --url "http://127.0.0.1:$rport/hook" >/dev/null

# The stream: an event every 50 ms, each committed on its own, for up to 60 s.
sql -c "DO \$\$ BEGIN FOR i IN 1..1200 LOOP
	PERFORM mp_queue_event($merchant, 'payment.succeeded', json_build_object('n', i));
	COMMIT; PERFORM pg_sleep(0.05); END LOOP; END \$\$" >/dev/null 2>&1 &
stream_pid=$!
sleep 3
made=$(sql -c "SELECT count(*) FROM webhook_events WHERE merchant_id = $merchant")
check "the stream makes events ($made in 3 s)" [ "$made" -gt 20 ]
check "events made before the wait: all delivered within it, events still being made" \
	events_delivered 15
on_way=$(sql -c "SELECT count(*) FROM webhook_events WHERE merchant_id = $merchant
	AND status <> 'delivered'")
check "meanwhile events were on their way, as under load ($on_way)" [ "$on_way" -gt 0 ]

"$stack" webhookd-stop "$MARKETPAY_STACK_DIR"
sleep 1
if left=$(events_delivered 2 2>&1); then r=0; else r=$?; fi
failed_naming=no
[ "$r" != 0 ] && [[ $left == *" events not delivered" ]] && failed_naming=yes
check "webhookd stopped: the wait fails ($r), naming the events left: $left" \
	[ "$failed_naming" = yes ]
finish
