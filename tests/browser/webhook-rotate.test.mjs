// A merchant rotates its webhook signing secret over the API, as its engineer would, and its
// endpoint keeps verifying every delivery with the official Standard Webhooks library (npm's
// standardwebhooks): before the rotation with the old secret; in the rotation window with the
// old secret and with the new one (the endpoint may hold either); after the window (its end
// moved into the past from psql, in place of waiting a day) with the new one only. The events
// are the session.expired of sessions the merchant expires itself. No browser is needed; it
// runs with the browser tests (tests/browser.sh), which have the stack and the library.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { before, describe, it } from 'node:test';

import { Webhook, WebhookVerificationError } from 'standardwebhooks';

import {
	TEST_TIMEOUT, api, createMerchant, createSession, receiveWebhooks, waitForDeliveries,
} from './lib.mjs';

const ROTATE = '/api/v1/payment/webhook-endpoint/rotate-secret';

let merchant;
let oldSecret;

before(() => {
	merchant = createMerchant('Rotating Teas');
	oldSecret = receiveWebhooks(merchant);
});

// One statement against the stack's database (PGHOST and the rest come from its stack.env).
function sql(statement) {
	return execFileSync('psql', ['-X', '-qAt', '-v', 'ON_ERROR_STOP=1', '-c', statement], {
		encoding: 'utf8', timeout: 30_000,
	}).trim();
}

// The merchant expires a new session of its own; returns that session.expired delivery.
async function expiredDelivery() {
	const session = await createSession(merchant);
	await api('POST', `/api/v1/payment/sessions/${session.session_id}/expire`, merchant.key);
	const ds = await waitForDeliveries(session.session_id, 1);
	assert.equal(ds.length, 1, `the delivery of ${session.session_id}'s session.expired`);
	return ds[0];
}

// Verifies a logged delivery with secret as the merchant's endpoint would: the event, or it
// throws WebhookVerificationError.
function verify(secret, d) {
	return new Webhook(secret).verify(d.body, {
		'webhook-id': d.id, 'webhook-timestamp': d.timestamp, 'webhook-signature': d.signature,
	});
}

describe('webhook secret rotation', { timeout: TEST_TIMEOUT * 2 }, () => {
	it('verifies with the old and the new secret in the window, then with the new one only', {
		timeout: TEST_TIMEOUT * 2,
	}, async () => {
		const stranger = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYX';

		const before = await expiredDelivery();
		assert.equal(verify(oldSecret, before).type, 'session.expired');
		assert.throws(() => verify(stranger, before), WebhookVerificationError);

		const rotated = await api('POST', ROTATE, merchant.key, undefined,
		    { 'Idempotency-Key': `rotate-${merchant.id}` });
		assert.equal(rotated.message, 'Webhook signing secret rotated.');
		assert.match(rotated.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
		assert.notEqual(rotated.secret, oldSecret);
		const left = Date.parse(rotated.previous_secret_expires_at) - Date.now();
		assert.ok(left > 86_000_000 && left <= 86_400_000, `window ends in ${left} ms`);
		// A retry with the same key is the same rotation.
		const again = await api('POST', ROTATE, merchant.key, undefined,
		    { 'Idempotency-Key': `rotate-${merchant.id}` });
		assert.equal(again.secret, rotated.secret);

		// In the window: both signatures, the new secret's first; either secret verifies.
		const during = await expiredDelivery();
		const sigs = during.signature.split(' ');
		assert.equal(sigs.length, 2, `signatures in the window: ${during.signature}`);
		const event = verify(rotated.secret, during);
		assert.equal(event.type, 'session.expired');
		assert.deepEqual(verify(oldSecret, during), event);
		assert.throws(() => verify(stranger, during), WebhookVerificationError);
		assert.equal(verify(rotated.secret, { ...during, signature: sigs[0] }).id, event.id);
		assert.throws(() => verify(oldSecret, { ...during, signature: sigs[0] }),
		    WebhookVerificationError);

		// After the window: the new secret alone signs.
		assert.equal(sql(`UPDATE merchants SET webhook_secret_previous_until = now() -
		    interval '1 second' WHERE id = ${Number(merchant.id)} RETURNING 1`), '1');
		const after = await expiredDelivery();
		assert.equal(after.signature.split(' ').length, 1, `after: ${after.signature}`);
		assert.equal(verify(rotated.secret, after).type, 'session.expired');
		assert.throws(() => verify(oldSecret, after), WebhookVerificationError);
	});
});
