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

// Checks each JSON line of file with fn (problems, or null for one it passes over): how many
// lines, how many passed over, and the problems.
function checkLines(file, fn) {
	let n = 0, skipped = 0;
	const problems = [];
	for (const [i, line] of lines(file).entries()) {
		let p;
		try {
			p = fn(JSON.parse(line));
		} catch (e) {
			p = [`line ${i + 1} of ${file}: ${e instanceof SyntaxError ? 'not JSON' : e.message}`];
		}
		n++;
		if (p === null)
			skipped++;
		else
			problems.push(...p);
	}
	return { n, skipped, problems };
}

const x = checkLines(positionals[0], (e) => contract.exchange(e));
report(x.n > 0 && x.problems.length === 0,
	`the run's ${x.n} HTTP exchanges are as doc/openapi.yaml documents them ` +
	`(${x.skipped} not the worker's: no reply, or outside /api/v1/ and /checkout/)`,
	x.n > 0 ? x.problems : ['no exchange was recorded (is MP_HTTP_RECORD set?)']);
if (opt.webhooks) {
	const w = checkLines(opt.webhooks, (e) => contract.webhook(e));
	report(w.n > w.skipped && w.problems.length === 0,
		`the run's ${w.n} webhook deliveries are as doc/openapi.yaml documents them ` +
		`(${w.skipped} raw test events, not the service's: no JSON object with an id)`,
		w.n > w.skipped ? w.problems : ['no event of a documented type was delivered']);
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
// An entry ending in * stands for every field under it ("refunds[]*").
const covers = (a, u) => (a.endsWith('*') ? u.startsWith(a.slice(0, -1)) : a === u);
const unsent = contract.unsent();
const missing = unsent.filter((u) => ![...allowed.keys()].some((a) => covers(a, u)));
const stale = [...allowed.keys()].filter((a) => !unsent.some((u) => covers(a, u)))
	.map((a) => `allowlisted but sent, or not documented: ${a}`);
// A reply the run never produced at all is one line, not one per field.
const none = [...contract.documented].filter(([k, d]) => d.size && contract.sent.get(k).size === 0)
	.map(([k]) => k);
const shown = missing.filter((m) => !none.some((k) => m.startsWith(`${k} `)))
	.map((m) => `never sent: ${m}`);
report(missing.length === 0 && stale.length === 0 && bad.length === 0,
	`every documented success field was sent by the run (${allowed.size} allowlisted in ${opt.unsent})`,
	[...none.map((k) => `never produced: ${k}, none of its fields was sent`), ...shown, ...stale, ...bad]);
const unseen = contract.unseenSuccesses();
if (unseen.length)
	console.log(`note: documented successes the run never produced: ${unseen.join('; ')}`);
// Not a failure (many are the front web server's, or outages): what the suites could add.
const statuses = contract.unseenStatuses();
console.log(`note: ${statuses.length} documented statuses no exchange had: ${statuses.join('; ')}`);
process.exit(failed ? 1 : 0);
