// The hosted checkout page in a real browser (Debian's chromium driven by playwright-core)
// against a whole stack: nginx, the FastCGI pool, PostgreSQL. Run by tests/browser.sh.
// Every test makes its own payment session. The payment tests run with JavaScript off:
// the page must work without it (its CSP forbids scripts anyway).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
	NAV_TIMEOUT, TEST_TIMEOUT, balance, baseUrl, cardForm, createMerchant, createSession,
	createWallet, failureUrl, futureExpiry, getSession, landedOn, launch, ledgerVerify, outDir,
	submitForm, successUrl, walletForm, withPage,
} from './lib.mjs';

const NO_JS = { javaScriptEnabled: false };
const XSS = '<img src=x onerror="window.__xss=1"><script>window.__xss=1</script>';
// Payloads for every text field a merchant sends: one for element context, one that first
// closes an attribute. user_id holds at most 50 characters; an e-mail address no spaces.
const XSS_IMG = '<img src=x onerror=window.__xss=1>';
const XSS_ATTR = '"><script>window.__xss=1</script>';
const XSS_EMAILS = ['"><script>window.__xss=1</script>@x.example',
	'<svg/onload=window.__xss=1>@x.example'];

let browser;
let merchant;

before(async () => {
	merchant = createMerchant('Green Leaf Tea Co.');
	browser = await launch();
});

after(async () => {
	await browser?.close();
});

// Opens the session's page and checks what every open page shows.
async function openCheckout(page, session) {
	const res = await page.goto(session.url, { waitUntil: 'load' });
	assert.equal(res.status(), 200, `GET ${session.url}`);
	assert.equal(await page.locator('.merchant').innerText(), merchant.name);
	return res;
}

// create-session with a body of the test's own (lib.mjs's createSession sends no email).
async function createSessionWith(m, body) {
	const res = await fetch(`${baseUrl}/api/v1/payment/create-session`, {
		method: 'POST',
		headers: { Authorization: `API-KEY ${m.key}`, 'Content-Type': 'application/json' },
		body: JSON.stringify(body),
		signal: AbortSignal.timeout(NAV_TIMEOUT),
	});
	const json = await res.json();
	assert.equal(res.status, 200, `create-session: ${JSON.stringify(json)}`);
	return json;
}

// The POST answered 303 to the landing page, which got session_id and user_id.
function assertRedirect(response, query, session, landing) {
	assert.equal(response.status(), 303, 'the form POST answers 303 See Other');
	assert.ok(response.headers().location.startsWith(landing),
	    `Location ${response.headers().location} starts with ${landing}`);
	assert.equal(query.get('session_id'), session.session_id);
	assert.equal(query.get('user_id'), 'order-1');
}

async function assertStatus(session, want) {
	const got = await getSession(merchant, session.session_id);
	assert.equal(got.status, want, `session ${session.session_id} status`);
	return got;
}

async function payByCard(page, session, number) {
	await openCheckout(page, session);
	const card = cardForm(page);
	await card.number.fill(number);
	await card.expiry.fill(futureExpiry());
	await card.cvc.fill('123');
	assert.match(await card.button.innerText(), /^Pay\b/);
	return submitForm(page, card.button);
}

describe('hosted checkout in a browser', { timeout: TEST_TIMEOUT * 9 }, () => {
	it('pays from a wallet and lands on the success URL', { timeout: TEST_TIMEOUT }, async (t) => {
		const wallet = createWallet('100.00', '1234');
		const session = await createSession(merchant);
		await withPage(browser, t, NO_JS, async (page) => {
			await openCheckout(page, session);
			// The merchant's name isolated (FSI ... PDI): the title is plain text.
			assert.equal(await page.title(), `Pay \u2068${merchant.name}\u2069`);
			assert.match(await page.locator('h1').innerText(), /\b12\.50\b/);
			assert.deepEqual(await page.locator('table.items td.name').allInnerTexts(),
			    ['Green tea']);
			assert.match(await page.locator('table.items td.price').innerText(), /^12\.50$/);
			assert.match(await page.locator('table.items tr.total td').innerText(), /\b12\.50\b/);

			const w = walletForm(page);
			await w.account.fill(wallet.account);
			await w.pin.fill(wallet.pin);
			assert.match(await w.button.innerText(), /^Pay\b.*12\.50/);
			const res = await submitForm(page, w.button);
			const query = await landedOn(page, 'success');
			assertRedirect(res, query, session, successUrl);

			// The page now says the order is paid, and offers no form to pay it again.
			await page.goto(session.url, { waitUntil: 'load' });
			assert.equal(await page.locator('h1').innerText(), 'Already paid');
			assert.equal(await page.locator('form').count(), 0);
		});
		await assertStatus(session, 'paid');
		assert.equal(balance(wallet.account), '87.50');
		ledgerVerify();
	});

	it('shows an error for a wrong PIN, then pays with the right one', { timeout: TEST_TIMEOUT },
	    async (t) => {
		const wallet = createWallet('100.00', '4321');
		const session = await createSession(merchant);
		await withPage(browser, t, NO_JS, async (page) => {
			await openCheckout(page, session);
			assert.equal(await page.locator('.error').count(), 0);
			let w = walletForm(page);
			await w.account.fill(wallet.account);
			await w.pin.fill('0000');
			const wrong = await submitForm(page, w.button);
			assert.ok(wrong.status() >= 200 && wrong.status() < 300,
			    `a wrong PIN re-renders the page (got ${wrong.status()})`);
			const error = page.locator('p.error[role="alert"]');
			await error.waitFor({ state: 'visible' });
			assert.notEqual((await error.innerText()).trim(), '');
			assert.equal(new URL(page.url()).pathname, new URL(session.url).pathname);
			// The re-rendered page is still the whole checkout.
			assert.match(await page.locator('table.items').innerText(), /Green tea/);
			await assertStatus(session, 'open');
			assert.equal(balance(wallet.account), '100.00');

			w = walletForm(page);
			await w.account.fill(wallet.account);
			await w.pin.fill(wallet.pin);
			const right = await submitForm(page, w.button);
			const query = await landedOn(page, 'success');
			assertRedirect(right, query, session, successUrl);
		});
		await assertStatus(session, 'paid');
		assert.equal(balance(wallet.account), '87.50');
		ledgerVerify();
	});

	it('pays with the test card 4242 4242 4242 4242', { timeout: TEST_TIMEOUT }, async (t) => {
		const session = await createSession(merchant);
		await withPage(browser, t, NO_JS, async (page) => {
			const res = await payByCard(page, session, '4242424242424242');
			const query = await landedOn(page, 'success');
			assertRedirect(res, query, session, successUrl);
		});
		await assertStatus(session, 'paid');
		ledgerVerify();
	});

	it('sends a declined card (4000 0000 0000 0002) to the failure URL', { timeout: TEST_TIMEOUT },
	    async (t) => {
		const session = await createSession(merchant);
		await withPage(browser, t, NO_JS, async (page) => {
			const res = await payByCard(page, session, '4000000000000002');
			const query = await landedOn(page, 'failure');
			assertRedirect(res, query, session, failureUrl);
		});
		await assertStatus(session, 'failed');
		ledgerVerify();
	});

	it('cancels and lands on the failure URL', { timeout: TEST_TIMEOUT }, async (t) => {
		const session = await createSession(merchant);
		await withPage(browser, t, NO_JS, async (page) => {
			await openCheckout(page, session);
			const cancel = page.locator('form.cancel button[type="submit"]');
			assert.equal((await cancel.innerText()).trim(), 'Cancel and return to the shop');
			const res = await submitForm(page, cancel);
			const query = await landedOn(page, 'failure');
			assertRedirect(res, query, session, failureUrl);
		});
		await assertStatus(session, 'canceled');
		ledgerVerify();
	});

	it('shows markup in item and merchant names as text and runs none of it',
	    { timeout: TEST_TIMEOUT }, async (t) => {
		const session = await createSession(merchant, {
			items: [{ id: 'sku-x', name: XSS, price: 12.50 }],
		});
		const evil = createMerchant('<script>window.__xss=2</script>Evil & Co');
		const evilSession = await createSession(evil);
		// JavaScript on and the CSP bypassed: this checks the escaping itself, which must
		// hold without the CSP's help.
		await withPage(browser, t, { bypassCSP: true }, async (page) => {
			const res = await page.goto(session.url, { waitUntil: 'load' });
			assert.equal(res.status(), 200);
			assert.equal(await page.locator('table.items td.name').innerText(), XSS);
			assert.equal(await page.locator('img').count(), 0, 'no <img> element');
			assert.equal(await page.locator('script').count(), 0, 'no <script> element');
			assert.equal(await page.evaluate(() => typeof window.__xss), 'undefined');

			await page.goto(evilSession.url, { waitUntil: 'load' });
			assert.equal(await page.locator('.merchant').innerText(), evil.name);
			assert.equal(await page.title(), `Pay \u2068${evil.name}\u2069`);
			assert.equal(await page.locator('script').count(), 0, 'no <script> element');
			assert.equal(await page.evaluate(() => typeof window.__xss), 'undefined');
		});
		// And the CSP as served forbids scripts.
		await withPage(browser, t, {}, async (page) => {
			const res = await page.goto(session.url, { waitUntil: 'load' });
			const csp = res.headers()['content-security-policy'] ?? '';
			assert.match(csp, /default-src 'none'/);
			assert.doesNotMatch(csp, /script-src|unsafe-inline|unsafe-eval/);
			assert.equal(await page.evaluate(() => typeof window.__xss), 'undefined');
		});
	});

	it('runs no script from item names, user_id or email, on the page or after paying',
	    { timeout: TEST_TIMEOUT }, async (t) => {
		// The payloads are live: put into a page unescaped, in text or in an attribute, each
		// one runs. Without this the checks below could pass with payloads that never would.
		await withPage(browser, t, {}, async (page) => {
			const live = [XSS, XSS_IMG, ...XSS_EMAILS].map((p) => `<p>${p}</p>`)
			    .concat([`<input value="${XSS_ATTR}">`, `<input value="${XSS_EMAILS[0]}">`]);
			for (const html of live) {
				await page.evaluate(() => { window.__xss = undefined; });
				await page.setContent(html, { waitUntil: 'load' });
				await page.waitForFunction(() => window.__xss === 1, null, { timeout: 5_000 })
				    .catch(() => assert.fail(`the payload in ${html} does not run`));
			}
		});
		const cases = [
			{ name: XSS_ATTR, userId: XSS_IMG, email: XSS_EMAILS[0] },
			{ name: XSS_IMG, userId: XSS_ATTR, email: XSS_EMAILS[1] },
		];
		for (const c of cases) {
			const wallet = createWallet('50.00', '1234');
			const session = await createSessionWith(merchant, {
				items: [{ id: XSS_ATTR.slice(0, 50), name: c.name, price: 12.50 }],
				user_id: c.userId,
				email: c.email,
				redirect_success_url: successUrl,
				redirect_failure_url: failureUrl,
			});
			// Stored and returned exactly as sent.
			const got = await getSession(merchant, session.session_id);
			assert.equal(got.user_id, c.userId);
			assert.equal(got.email, c.email);
			assert.equal(got.items[0].name, c.name);
			// JavaScript on and the CSP bypassed: the escaping alone must hold.
			await withPage(browser, t, { bypassCSP: true }, async (page) => {
				const dialogs = [];
				page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
				await openCheckout(page, session);
				assert.equal(await page.locator('table.items td.name').innerText(), c.name);
				assert.equal(await page.locator('script').count(), 0, 'no <script> element');
				assert.equal(await page.locator('img').count(), 0, 'no <img> element');
				const html = await page.content();
				for (const raw of [c.name, c.userId, c.email])
					assert.ok(!html.includes(raw), `the page holds ${raw} unescaped`);
				assert.equal(await page.evaluate(() => typeof window.__xss), 'undefined');

				// user_id travels in the success URL's query: it arrives as text, runs nothing.
				const w = walletForm(page);
				await w.account.fill(wallet.account);
				await w.pin.fill(wallet.pin);
				const res = await submitForm(page, w.button);
				assert.equal(res.status(), 303);
				assert.ok(!/[<>"]/.test(res.headers().location),
				    `Location carries markup: ${res.headers().location}`);
				const query = await landedOn(page, 'success');
				assert.equal(query.get('user_id'), c.userId);
				assert.equal(query.get('session_id'), session.session_id);
				assert.equal(await page.evaluate(() => typeof window.__xss), 'undefined');
				assert.deepEqual(dialogs, [], 'no dialog opened');
			});
			await assertStatus(session, 'paid');
		}
		ledgerVerify();
	});

	it('renders on a phone and on a desktop (screenshots)', { timeout: TEST_TIMEOUT }, async (t) => {
		const shots = [
			{ name: 'checkout-phone', viewport: { width: 375, height: 667 }, isMobile: true,
			  hasTouch: true, deviceScaleFactor: 2 },
			{ name: 'checkout-desktop', viewport: { width: 1280, height: 800 } },
		];
		for (const shot of shots) {
			const wallet = createWallet('100.00', '1234');
			const session = await createSession(merchant, {
				items: [
					{ id: 'sku-1', name: 'Green tea', price: 12.50 },
					{ id: 'sku-2', name: 'A rather long item name: hand-rolled jasmine pearls, ' +
					    'first flush, 250 g tin', price: 30.00 },
				],
			});
			const { name, ...options } = shot;
			await withPage(browser, t, options, async (page) => {
				const problems = [];
				page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
				page.on('pageerror', (e) => problems.push(String(e)));
				page.on('requestfailed', (r) => problems.push(`${r.url()}: ${r.failure()?.errorText}`));
				const css = page.waitForResponse((r) => new URL(r.url()).pathname ===
				    '/static/checkout.css');
				await openCheckout(page, session);
				// Browsers ignore a stylesheet served as anything but text/css.
				const cssRes = await css;
				assert.equal(cssRes.status(), 200, 'GET /static/checkout.css');
				assert.match(cssRes.headers()['content-type'] ?? '', /^text\/css\b/,
				    'the stylesheet must be served as text/css, or the browser ignores it ' +
				    '(nginx needs its mime.types)');
				// The stylesheet loaded under the CSP: the pay button is styled.
				assert.equal(await walletForm(page).button.evaluate(
				    (b) => getComputedStyle(b).backgroundColor), 'rgb(34, 80, 216)');
				// Nothing wider than the viewport (no sideways scrolling on a phone).
				const width = await page.evaluate(() => document.documentElement.scrollWidth);
				assert.ok(width <= options.viewport.width,
				    `page is ${width}px wide in a ${options.viewport.width}px viewport`);
				const path = join(outDir, `${name}.png`);
				await page.screenshot({ path, fullPage: true });
				t.diagnostic(`screenshot: ${path}`);

				// The same page with the wrong-PIN error on it.
				const w = walletForm(page);
				await w.account.fill(wallet.account);
				await w.pin.fill('0000');
				await submitForm(page, w.button);
				await page.locator('p.error[role="alert"]').waitFor({ state: 'visible' });
				const errPath = join(outDir, `${name}-error.png`);
				await page.screenshot({ path: errPath, fullPage: true });
				t.diagnostic(`screenshot: ${errPath}`);
				assert.deepEqual(problems, [], 'no console errors or failed requests');
			});
		}
	});
});
