// The contract test of an integration run (tests/integration.sh, through tests/openapi.sh
// --contract): every recorded HTTP exchange and webhook delivery against doc/openapi.yaml,
// then every documented success field against what the run sent.
//
//   node validate.mjs --doc doc/openapi.yaml --unsent unsent.txt \
//       [--webhooks webhooks.log] exchanges.jsonl
//
// Prints "ok: ..." or "FAIL: ..." per check (tests/openapi.sh counts them) with the problems
// under a failure; exits 1 when one failed.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Contract } from './contract.mjs';

const { values: opt, positionals } = parseArgs({
	options: { doc: { type: 'string' }, webhooks: { type: 'string' }, unsent: { type: 'string' } },
	allowPositionals: true,
});
if (!opt.doc || !opt.unsent || positionals.length !== 1) {
	console.error('usage: validate.mjs --doc FILE --unsent FILE [--webhooks FILE] EXCHANGES');
	process.exit(2);
}

let failed = 0;
function report(ok, what, problems = []) {
	if (ok) {
		console.log(`ok: ${what}`);
		return;
	}
	failed++;
	console.log(`FAIL: ${what}`);
	// The same problem of many exchanges once, with its count.
	const counts = new Map();
	for (const p of problems)
		counts.set(p, (counts.get(p) || 0) + 1);
	[...counts].slice(0, 60).forEach(([p, n]) => console.log(`    ${p}${n > 1 ? ` (${n} times)` : ''}`));
	if (counts.size > 60)
		console.log(`    ... and ${counts.size - 60} more`);
}

function lines(file) {
	return readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '');
}

const contract = new Contract(opt.doc);

// The exchanges.
let total = 0, outside = 0;
const problems = [];
for (const [i, line] of lines(positionals[0]).entries()) {
	let x;
	try {
		x = JSON.parse(line);
	} catch {
		problems.push(`line ${i + 1} of ${positionals[0]} is not JSON`);
		continue;
	}
	total++;
	const p = contract.exchange(x);
	if (p === null)
		outside++;
	else
		problems.push(...p);
}
report(total > 0 && problems.length === 0,
	`the run's ${total} HTTP exchanges are as doc/openapi.yaml documents them ` +
	`(${outside} not the worker's: no reply, or outside /api/v1/ and /checkout/)`,
	total > 0 ? problems : ['no exchange was recorded (is MP_HTTP_RECORD set?)']);

// The webhook deliveries.
if (opt.webhooks) {
	let n = 0, raw = 0;
	const wp = [];
	for (const line of lines(opt.webhooks)) {
		let w;
		try {
			w = JSON.parse(line);
		} catch {
			wp.push('a receiver log line is not JSON');
			continue;
		}
		n++;
		const p = contract.webhook(w);
		if (p === null)
			raw++;
		else
			wp.push(...p);
	}
	report(n > raw && wp.length === 0,
		`the run's ${n} webhook deliveries are as doc/openapi.yaml documents them ` +
		`(${raw} raw test events without a type)`, n > raw ? wp : ['no event of a documented type was delivered']);
}

// Every documented success field, sent at least once (with a value other than null), or
// listed in the allowlist with its reason; an entry the run did send is stale.
const allowed = new Map(), bad = [];
for (const l of lines(opt.unsent).filter((s) => !s.startsWith('#'))) {
	const [what, reason] = l.split(' -- ');
	if (!reason || !reason.trim())
		bad.push(`allowlist entry without a reason: ${l}`);
	allowed.set(what.trim(), reason);
}
const unsent = contract.unsent();
const missing = unsent.filter((u) => !allowed.has(u));
const stale = [...allowed.keys()].filter((a) => !unsent.includes(a))
	.map((a) => `allowlisted but sent, or not documented: ${a}`);
report(missing.length === 0 && stale.length === 0 && bad.length === 0,
	`every documented success field was sent by the run (${allowed.size} allowlisted in ${opt.unsent})`,
	[...missing.map((m) => `never sent: ${m}`), ...stale, ...bad]);
const unseen = contract.unseenSuccesses();
if (unseen.length)
	console.log(`note: documented successes the run never produced: ${unseen.join('; ')}`);
process.exit(failed ? 1 : 0);
