// The contract checker can fail: exchanges and webhooks as the service sends them pass, and
// the same doctored (an extra field, a wrong type, an undocumented status or header, a wrong
// Allow, an unknown event) are refused; every component is used; a field never sent is
// reported. Prints "ok: ..." or "FAIL: ..." per case (tests/openapi.sh counts them).
//
//   node selftest.mjs --doc doc/openapi.yaml
import { parseArgs } from 'node:util';
import { Contract } from './contract.mjs';

const { values: opt } = parseArgs({ options: { doc: { type: 'string' } } });
let failed = 0;
function check(what, cond, detail) {
	console.log(`${cond ? 'ok' : 'FAIL'}: ${what}`);
	if (!cond) {
		failed++;
		if (detail !== undefined)
			console.log(`    ${JSON.stringify(detail)}`);
	}
}

const SID = '77463f68-35b7-4ccc-a270-ceeb4998be5c';
const JSON_H = { 'content-type': 'application/json', 'request-id': '0123456789abcdef0123456789abcdef',
	'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
const created = { status_code: 10, success: true, message: 'Payment session created.',
	url: `http://127.0.0.1:8080/checkout/${SID}`, expires_at: '2026-11-22T03:38:18+00:00',
	session_id: SID };
const createX = (body = created, over = {}) => ({ method: 'POST', path: '/api/v1/payment/create-session',
	request_content_type: 'application/json',
	request_body: '{"items":[{"id":"sku-1","name":"Tea","price":12.50}],"user_id":"order-42"}',
	status: 200, headers: JSON_H, body: JSON.stringify(body), ...over });
const reversal = { id: `trr_${'a'.repeat(32)}`, transfer_id: `tr_${'b'.repeat(32)}`, amount: '3.00',
	currency: 'USD', reason: null, refund_id: null, created_at: '2026-11-22T05:06:40+00:00' };
const hook = (body) => ({ id: body.id, timestamp: '1614265330', content_type: 'application/json',
	signature: `v1,${'A'.repeat(43)}=`, body: JSON.stringify(body) });
const reversedEvent = { id: `evt_${'c'.repeat(32)}`, type: 'transfer.reversed',
	created_at: '2026-11-22T05:06:40+00:00', livemode: false,
	data: { reversal, transfer_id: reversal.transfer_id, vendor_account_number: 'VE1034958825',
		amount_reversed: '3.00', amount_reversible: '21.00' } };

const c = new Contract(opt.doc);
const refused = (x, re) => {
	const p = c.exchange(x);
	return p !== null && p.some((s) => re.test(s)) ? true : p;
};

check('a create-session reply as the service sends it passes', c.exchange(createX()).length === 0,
	c.exchange(createX()));
let r = refused(createX({ ...created, extra: 1 }), /must NOT have additional properties \(extra\)/);
check('a reply with an extra field is refused', r === true, r);
r = refused(createX({ ...created, status_code: '10' }), /status_code must be integer/);
check('a reply with a field of the wrong type is refused', r === true, r);
r = refused(createX({ ...created, session_id: undefined }), /must have required property 'session_id'/);
check('a reply without a documented field is refused', r === true, r);
r = refused(createX(created, { status: 402 }), /status 402 is not documented/);
check('an undocumented status is refused', r === true, r);
r = refused(createX(created, { headers: { ...JSON_H, 'retry-after': '5' } }),
	/header retry-after is not documented/);
check('a header the response does not document is refused', r === true, r);
r = refused(createX(created, { headers: { 'content-type': 'application/json' } }), /Request-Id is missing/);
check('a reply without Request-Id is refused', r === true, r);
r = refused(createX(created, { headers: { ...JSON_H, 'cache-control': 'max-age=60' } }), /no-store/);
check('a reply of the service without Cache-Control: no-store is refused', r === true, r);
r = refused(createX(created, { headers: { ...JSON_H, 'content-type': 'text/html' } }), /content type/);
check('a reply of an undocumented content type is refused', r === true, r);
r = refused(createX(created, { request_body: '{"items":[],"extra":1}' }), /request body/);
check('an accepted request the document says is invalid is refused', r === true, r);
r = refused(createX({ success: false, message: 'x', detail: 'y' }, { status: 400 }), /additional/);
check('an error body with a field too many is refused', r === true, r);
r = refused({ method: 'GET', path: '/api/v1/payment/create-session', status: 405,
	headers: { ...JSON_H, allow: 'POST, GET' }, body: '{"success":false,"message":"no"}' }, /Allow is/);
check('a 405 whose Allow is not the documented methods is refused', r === true, r);
r = c.exchange({ method: 'GET', path: '/api/v1/payment/create-session', status: 405,
	headers: { ...JSON_H, allow: 'POST' }, body: '{"success":false,"message":"method not allowed here; use POST"}' });
check('a 405 naming the documented methods passes', r.length === 0, r);
r = refused({ method: 'GET', path: '/api/v1/nope', status: 200, headers: JSON_H, body: '{}' }, /want 404/);
check('a reply other than 404 for an undocumented path is refused', r === true, r);
r = refused({ method: 'GET', path: `/api/v1/payment/sessions/${SID}`, status: 401, headers: JSON_H,
	body: '{"detail":"Authentication credentials were not provided or are invalid."}' }, /detail must be equal/);
check("a 401 with the other endpoints' detail text is refused", r === true, r);
check('a webhook as the service sends it passes', c.webhook(hook(reversedEvent)).length === 0,
	c.webhook(hook(reversedEvent)));
r = c.webhook(hook({ ...reversedEvent, data: { ...reversedEvent.data, amount_reversed: 3 } }));
check('a webhook with a field of the wrong type is refused', r.some((s) => /amount_reversed must be string/.test(s)), r);
r = c.webhook(hook({ type: 'payment.succeeded', data: {} }));
check("a test suite's raw event (no id) is passed over", r === null, r);
r = c.webhook(hook({ ...reversedEvent, type: 'transfer.vanished' }));
check('a webhook of an undocumented type is refused', r.some((s) => /not documented/.test(s)), r);
r = c.webhook({ ...hook(reversedEvent), signature: 'v2,abc' });
check('a webhook with a malformed signature header is refused', r.some((s) => /webhook-signature/.test(s)), r);
r = c.webhook(hook({ ...reversedEvent, extra: true }));
check('a webhook with an extra top-level field is refused', r.some((s) => /unevaluated|additional/.test(s)), r);
const unsent = c.unsent();
check('a documented field no exchange carried is reported (here, GET session)',
	unsent.includes(`GET /api/v1/payment/sessions/{session_id} 200 refunds[].reversals[].refund_id`) &&
	!unsent.includes('POST /api/v1/payment/create-session 200 session_id') &&
	unsent.includes('webhook transfer.reversed data.reversal.refund_id') &&
	!unsent.includes('webhook transfer.reversed data.reversal.id'), unsent.slice(0, 5));
const unused = c.unusedComponents();
check('every component of the document is referenced', unused.length === 0, unused);
console.log(`selftest: ${failed} failed`);
process.exit(failed ? 1 : 0);
