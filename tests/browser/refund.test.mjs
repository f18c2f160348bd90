// Refunds as a merchant's engineer meets them: a customer pays on the hosted page in a real
// browser, the merchant's backend refunds part and then the rest over the API, and its
// webhook endpoint checks every event with the official Standard Webhooks library
// (npm's standardwebhooks), as the docs tell merchants to, a redelivered one too. Run by
// tests/browser.sh.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { Webhook, WebhookVerificationError } from 'standardwebhooks';

import {
	TEST_TIMEOUT, api, balance, createMerchant, createSession, createWallet, landedOn, launch,
	ledgerVerify, receiveWebhooks, submitForm, waitForDeliveries, walletForm, withPage,
} from './lib.mjs';

let browser;
let merchant;
let secret;

before(async () => {
	merchant = createMerchant('Refund Books');
	secret = receiveWebhooks(merchant);
	browser = await launch();
});

after(async () => {
	await browser?.close();
});

function refund(sessionId, body, idempotencyKey) {
	return api('POST', `/api/v1/payment/sessions/${sessionId}/refunds`, merchant.key, body,
	    { 'Idempotency-Key': idempotencyKey });
}

// Verifies a logged delivery as a merchant's endpoint would; returns the event.
function verified(d) {
	return new Webhook(secret).verify(d.body, {
		'webhook-id': d.id, 'webhook-timestamp': d.timestamp, 'webhook-signature': d.signature,
	});
}

describe('refunds, end to end', { timeout: TEST_TIMEOUT * 3 }, () => {
	it('pays in the browser, refunds in two parts, and signs every event', {
		timeout: TEST_TIMEOUT * 2,
	}, async (t) => {
		const wallet = createWallet('100.00', '1234');
		const session = await createSession(merchant);
		await withPage(browser, t, { javaScriptEnabled: false }, async (page) => {
			await page.goto(session.url, { waitUntil: 'load' });
			const w = walletForm(page);
			await w.account.fill(wallet.account);
			await w.pin.fill(wallet.pin);
			await submitForm(page, w.button);
			await landedOn(page, 'success');
		});
		assert.equal(balance(wallet.account), '87.50');

		const first = await refund(session.session_id, { amount: 5.00, reason: 'damaged' },
		    `refund-${session.session_id}-1`);
		assert.equal(first.message, 'Refund succeeded.');
		assert.match(first.refund.id, /^re_[0-9a-f]{32}$/);
		assert.deepEqual({ ...first.refund, id: undefined, created_at: undefined }, {
			id: undefined, session_id: session.session_id, amount: '5.00', currency: 'AFN',
			status: 'succeeded', reason: 'damaged', created_at: undefined, reversals: [],
		});
		assert.equal(balance(wallet.account), '92.50');
		let got = await api('GET', `/api/v1/payment/sessions/${session.session_id}`,
		    merchant.key);
		assert.equal(got.status, 'paid');
		assert.equal(got.amount_refunded, '5.00');
		assert.deepEqual(got.refunds, [first.refund]);

		// A retry of the same request is the same refund; {} refunds what is left.
		const again = await refund(session.session_id, { amount: 5.00, reason: 'damaged' },
		    `refund-${session.session_id}-1`);
		assert.equal(again.refund.id, first.refund.id);
		const rest = await refund(session.session_id, {}, `refund-${session.session_id}-2`);
		assert.equal(rest.refund.amount, '7.50');
		assert.equal(balance(wallet.account), '100.00');
		got = await api('GET', `/api/v1/payment/refunds/${rest.refund.id}`, merchant.key);
		assert.deepEqual(got.refund, rest.refund);
		got = await api('GET', `/api/v1/payment/sessions/${session.session_id}`, merchant.key);
		assert.equal(got.status, 'refunded');
		assert.equal(got.amount_refunded, '12.50');

		// The customer's page says so, and offers nothing to pay.
		await withPage(browser, t, { javaScriptEnabled: false }, async (page) => {
			await page.goto(session.url, { waitUntil: 'load' });
			assert.equal(await page.locator('h1').innerText(), 'Payment refunded');
			assert.equal(await page.locator('form').count(), 0);
		});

		// Three events for this session, each verified by the official library.
		const ds = await waitForDeliveries(session.session_id, 3);
		assert.equal(ds.length, 3, `deliveries for ${session.session_id}`);
		const events = ds.map(verified);
		const refunds = events.filter((e) => e.type === 'refund.succeeded');
		assert.deepEqual(events.map((e) => e.type).sort(),
		    ['payment.succeeded', 'refund.succeeded', 'refund.succeeded']);
		assert.deepEqual(refunds.map((e) => [e.data.refund.id, e.data.user_id,
		    e.data.session_id, e.data.amount_refunded, e.data.amount_refundable]).sort(), [
			[first.refund.id, 'order-1', session.session_id, '5.00', '7.50'],
			[rest.refund.id, 'order-1', session.session_id, '12.50', '0.00'],
		].sort());
		assert.deepEqual(refunds.find((e) => e.data.refund.id === first.refund.id).data.refund,
		    first.refund);
		// The library is not a rubber stamp: one changed byte and it refuses.
		const forged = { ...ds[0], body: ds[0].body.replace('"', ' "') };
		assert.throws(() => verified(forged), WebhookVerificationError);

		// The events API lists the payment's event; redelivered, it comes again with the
		// same webhook-id and body, a new signature the library accepts.
		const paid = events.find((e) => e.type === 'payment.succeeded');
		const listed = await api('GET', '/api/v1/payment/events?type=payment.succeeded',
		    merchant.key);
		const item = listed.data.find((e) => e.id === paid.id);
		assert.deepEqual(item.payload, paid);
		assert.equal(item.delivery.status, 'delivered');
		const redelivered = await api('POST', `/api/v1/payment/events/${paid.id}/redeliver`,
		    merchant.key);
		assert.equal(redelivered.message, 'Event queued for redelivery.');
		const all = await waitForDeliveries(session.session_id, 4);
		const twice = all.filter((d) => d.id === paid.id);
		assert.equal(twice.length, 2, `deliveries of ${paid.id}`);
		assert.equal(twice[1].body, twice[0].body);
		assert.deepEqual(verified(twice[1]), paid);
		ledgerVerify();
	});
});
