// The hosted page in each of its languages (English; Dari and Pashto, right to left) in a
// real browser: chosen from Accept-Language, switched by a plain link, fixed by the merchant;
// lang and dir on <html>, the catalog's texts, amounts kept left to right, a wallet payment
// and a declined card end to end with digits typed as a Dari or Pashto keyboard types them,
// screenshots, and the axe-core audit (WCAG 2.1 AA and best practice) with no violation in
// every language at phone and desktop width. Run by tests/browser.sh.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
	TEST_TIMEOUT, api, baseUrl, cardForm, createMerchant, createWallet, failureUrl, futureExpiry,
	getSession, landedOn, launch, ledgerVerify, outDir, submitForm, successUrl, walletForm,
	withPage,
} from './lib.mjs';

const require = createRequire(import.meta.url);
const AXE = require.resolve('axe-core/axe.min.js');
const SRCDIR = process.env.MP_SRCDIR ?? join(import.meta.dirname, '..', '..');

// A catalog's translations (msgid -> msgstr; msgctxt "c" makes the key "c\u0004msgid").
function catalog(code) {
	if (code === 'en') return new Proxy({}, { get: (_, k) => String(k).split('\u0004').pop() });
	const text = readFileSync(join(SRCDIR, 'po', `${code}.po`), 'utf8');
	const unq = (s) => JSON.parse(s);
	const out = {};
	for (const block of text.split(/\n\n+/)) {
		const ctx = block.match(/^msgctxt (".*")$/m);
		const id = block.match(/^msgid (".*")$/m);
		const str = block.match(/^msgstr (".*")$/m);
		if (id && str && unq(id[1]) !== '')
			out[(ctx ? `${unq(ctx[1])}\u0004` : '') + unq(id[1])] = unq(str[1]);
	}
	return new Proxy(out, { get: (o, k) => {
		assert.ok(k in o, `po/${code}.po has no ${String(k)}`);
		return o[k];
	} });
}

// Persian digits (U+06F0-U+06F9) and Arabic-Indic ones (U+0660-U+0669) for ASCII ones.
const persian = (s) => s.replace(/[0-9]/g, (d) => String.fromCharCode(0x6f0 + Number(d)));
const arabic = (s) => s.replace(/[0-9]/g, (d) => String.fromCharCode(0x660 + Number(d)));

const LANGS = [
	{ code: 'en', tag: 'en', dir: 'ltr', accept: 'en-US,en;q=0.9', digits: (s) => s,
	  typed: (s) => s, total: '12.50' },
	{ code: 'fa_AF', tag: 'fa-AF', dir: 'rtl', accept: 'fa-AF, ps;q=0.8, en;q=0.5',
	  digits: persian, typed: persian, total: '\u06f1\u06f2\u066b\u06f5\u06f0' },
	{ code: 'ps', tag: 'ps', dir: 'rtl', accept: 'en;q=0.3, ps-AF, fa;q=0.7', digits: persian,
	  typed: arabic, total: '\u06f1\u06f2\u066b\u06f5\u06f0' },
];

const NO_JS = { javaScriptEnabled: false };
const PHONE = { viewport: { width: 375, height: 667 }, isMobile: true, hasTouch: true,
	deviceScaleFactor: 2 };

let browser;
let merchant;

before(async () => {
	// A right-to-left merchant name: shown isolated, it must not reorder an English page.
	merchant = createMerchant('چای سبز Tea House');
	browser = await launch();
});

after(async () => {
	await browser?.close();
});

function newSession(extra = {}) {
	return api('POST', '/api/v1/payment/create-session', merchant.key, {
		items: [{ id: 'sku-1', name: 'Green tea', price: 12.50 }],
		user_id: 'order-1',
		redirect_success_url: successUrl,
		redirect_failure_url: failureUrl,
		...extra,
	});
}

// Runs axe-core in the page (injected from node_modules: the page's CSP allows no script,
// hence bypassCSP in the contexts that audit); returns the violations, described.
async function audit(page) {
	await page.addScriptTag({ path: AXE });
	const violations = await page.evaluate(async () => {
		const r = await window.axe.run(document, { runOnly: { type: 'tag',
			values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
		return r.violations.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) =>
			n.target.join(' ')).join(', ')})`);
	});
	return violations;
}

// The page's language as <html> says it, and the catalog's texts where they belong.
async function assertLanguage(page, lang) {
	const t = catalog(lang.code);
	assert.equal(await page.getAttribute('html', 'lang'), lang.tag);
	assert.equal(await page.getAttribute('html', 'dir'), lang.dir);
	assert.equal(await page.title(), t['title\u0004Pay %s'].replace('%s',
	    `\u2068${merchant.name}\u2069`));
	assert.equal(await page.locator('.merchant').innerText(), merchant.name);
	// Merchant-supplied text is isolated: its own direction, not the page's.
	assert.equal(await page.locator('.merchant > bdi').count(), 1);
	assert.equal(await page.locator('table.items td.name > bdi').count(),
	    await page.locator('table.items td.name').count());
	assert.equal(await page.locator('.merchant > bdi').evaluate(
	    (el) => getComputedStyle(el).unicodeBidi), 'isolate');
	assert.equal(await page.locator('table.items caption').innerText(), t.Order);
	assert.equal(await page.locator('form.wallet h2').innerText(), t['Pay from your wallet']);
	assert.equal((await page.locator('form.cancel button').innerText()).trim(),
	    t['Cancel and return to the shop']);
	assert.equal(await page.locator('tr.total td').innerText(), `${lang.total} AFN`);
	assert.equal((await walletForm(page).button.innerText()).trim(),
	    t['Pay %s from wallet'].replace('%s', `${lang.total} AFN`));
}

// In a right-to-left page the amount still reads left to right: its first digit is drawn
// left of the currency code (the isolate holds), whatever the text around it.
async function assertAmountLtr(page, selector = 'tr.total td bdi.amount') {
	const order = await page.locator(selector).evaluate((el) => {
		const text = el.firstChild;
		const r = document.createRange();
		r.setStart(text, 0);
		r.setEnd(text, 1);
		const first = r.getBoundingClientRect().left;
		r.setStart(text, text.length - 1);
		r.setEnd(text, text.length);
		return { first, last: r.getBoundingClientRect().left,
		    direction: getComputedStyle(el).direction };
	});
	assert.ok(order.first < order.last, `amount drawn right to left: ${JSON.stringify(order)}`);
	assert.equal(order.direction, 'ltr');
}

describe('the hosted page in each language', { timeout: TEST_TIMEOUT * 12 }, () => {
	for (const lang of LANGS) {
		it(`${lang.tag}: chosen by Accept-Language "${lang.accept}", pays from a wallet with ` +
		    'digits as typed there', { timeout: TEST_TIMEOUT }, async (t) => {
			const wallet = createWallet('100.00', '1234');
			const session = await newSession();
			await withPage(browser, t, { ...NO_JS, extraHTTPHeaders: { 'Accept-Language':
			    lang.accept } }, async (page) => {
				const res = await page.goto(session.url, { waitUntil: 'load' });
				assert.equal(res.status(), 200);
				assert.match(res.headers().vary ?? '', /Accept-Language/);
				await assertLanguage(page, lang);
				await assertAmountLtr(page);
				const w = walletForm(page);
				await w.account.fill(wallet.account.slice(0, 2) + lang.typed(wallet.account.slice(2)));
				await w.pin.fill(lang.typed(wallet.pin));
				const post = await submitForm(page, w.button);
				assert.equal(post.status(), 303);
				await landedOn(page, 'success');
			});
			assert.equal((await getSession(merchant, session.session_id)).status, 'paid');
			ledgerVerify();
		});

		it(`${lang.tag}: a declined card lands on the failure URL; a wrong PIN says so in ` +
		    'the catalog\'s words', { timeout: TEST_TIMEOUT }, async (t) => {
			const tr = catalog(lang.code);
			const session = await newSession({ locale: lang.tag });
			const wallet = createWallet('100.00', '4321');
			// The merchant fixed the language: the browser's asks for another.
			await withPage(browser, t, { ...NO_JS, extraHTTPHeaders: { 'Accept-Language':
			    lang.code === 'en' ? 'ps' : 'en' } }, async (page) => {
				await page.goto(session.url, { waitUntil: 'load' });
				await assertLanguage(page, lang);
				const w = walletForm(page);
				await w.account.fill(wallet.account);
				await w.pin.fill(lang.typed('0000'));
				await submitForm(page, w.button);
				const error = page.locator('p.error[role="alert"]');
				assert.equal(await error.innerText(), tr['Unknown account number or wrong PIN.']);
				assert.equal(await page.getAttribute('html', 'lang'), lang.tag);

				const card = cardForm(page);
				await card.number.fill(lang.typed('4000 0000 0000 0002'));
				await card.expiry.fill(lang.typed(futureExpiry()));
				await card.cvc.fill(lang.typed('123'));
				const post = await submitForm(page, card.button);
				assert.equal(post.status(), 303);
				await landedOn(page, 'failure');
			});
			assert.equal((await getSession(merchant, session.session_id)).status, 'failed');
			ledgerVerify();
		});

		it(`${lang.tag}: no axe-core violation at phone and desktop width (screenshots)`,
		    { timeout: TEST_TIMEOUT }, async (t) => {
			const session = await newSession({
				items: [
					{ id: 'sku-1', name: 'Green tea', price: 12.50 },
					{ id: 'sku-2', name: 'چای سبز ممتاز، ۲۵۰ گرام', price: 1238.00 },
				],
			});
			for (const [name, options] of [['phone', PHONE], ['desktop', {}]]) {
				await withPage(browser, t, { ...options, bypassCSP: true,
				    extraHTTPHeaders: { 'Accept-Language': lang.accept } }, async (page) => {
					await page.goto(session.url, { waitUntil: 'load' });
					assert.equal(await page.getAttribute('html', 'lang'), lang.tag);
					const width = await page.evaluate(() => document.documentElement.scrollWidth);
					const viewport = page.viewportSize().width;
					assert.ok(width <= viewport, `page is ${width}px wide in ${viewport}px`);
					const shot = join(outDir, `checkout-${lang.code}-${name}.png`);
					await page.screenshot({ path: shot, fullPage: true });
					t.diagnostic(`screenshot: ${shot}`);
					assert.deepEqual(await audit(page), [], `${lang.tag} ${name}`);
					// The page with an error on it, and the 404 page, audited too.
					const w = walletForm(page);
					await w.account.fill('XX0000000000');
					await w.pin.fill('0000');
					await submitForm(page, w.button);
					await page.locator('p.error').waitFor();
					assert.deepEqual(await audit(page), [], `${lang.tag} ${name} with an error`);
					const res = await page.goto(`${baseUrl}/checkout/00000000-0000-4000-8000-` +
					    '000000000000', { waitUntil: 'load' });
					assert.equal(res.status(), 404);
					assert.equal(await page.locator('h1').innerText(),
					    catalog(lang.code)['Page not found']);
					assert.deepEqual(await audit(page), [], `${lang.tag} ${name} 404`);
				});
			}
		});
	}

	it('the audit and the amount check find faults where there are some (their controls)',
	    { timeout: TEST_TIMEOUT }, async (t) => {
		await withPage(browser, t, {}, async (page) => {
			await page.setContent('<!DOCTYPE html><html><head><title>x</title></head><body>' +
			    '<main><img src="data:,"><p style="color:#eee;background:#fff">faint</p>' +
			    '<input name="unlabelled"></main></body></html>', { waitUntil: 'load' });
			const found = (await audit(page)).map((v) => v.split(':')[0]).sort();
			for (const id of ['color-contrast', 'html-has-lang', 'image-alt', 'label'])
				assert.ok(found.includes(id), `axe did not report ${id}: ${found}`);
			// And the amount check sees an amount scrambled in right-to-left text.
			await page.setContent('<!DOCTYPE html><html lang="ps" dir="rtl"><body><p>' +
			    '<span class="x">\u06f1\u06f2\u066b\u06f5\u06f0 AFN</span> ټولټال</p></body></html>');
			await assert.rejects(assertAmountLtr(page, 'span.x'), /drawn right to left/);
		});
	});

	it('switches language by a plain link (no JavaScript), and keeps it through a retry',
	    { timeout: TEST_TIMEOUT }, async (t) => {
		const ps = catalog('ps');
		const session = await newSession();
		await withPage(browser, t, NO_JS, async (page) => {
			await page.goto(session.url, { waitUntil: 'load' });
			assert.equal(await page.getAttribute('html', 'lang'), 'en');
			await Promise.all([page.waitForURL(/[?&]lang=ps\b/),
			    page.locator('nav.languages a[hreflang="ps"]').click()]);
			await assertLanguage(page, LANGS[2]);
			assert.equal(await page.locator('nav.languages [aria-current="true"]').innerText(),
			    'پښتو');
			const w = walletForm(page);
			await w.account.fill('XX0000000000');
			await w.pin.fill('0000');
			await submitForm(page, w.button);
			assert.equal(await page.getAttribute('html', 'lang'), 'ps');
			assert.equal(await page.locator('p.error').innerText(),
			    ps['Unknown account number or wrong PIN.']);
			await page.locator('nav.languages a[hreflang="en"]').click();
			await page.waitForURL(/[?&]lang=en\b/);
			assert.equal(await page.getAttribute('html', 'dir'), 'ltr');
		});
	});

	it('refuses an unknown locale at create-session (400 naming the field), storing nothing',
	    { timeout: TEST_TIMEOUT }, async () => {
		const res = await fetch(`${baseUrl}/api/v1/payment/create-session`, {
			method: 'POST',
			headers: { Authorization: `API-KEY ${merchant.key}`,
			    'Content-Type': 'application/json' },
			body: JSON.stringify({ items: [{ id: 'a', name: 'x', price: 1 }], user_id: 'loc-x',
			    locale: 'de' }),
		});
		assert.equal(res.status, 400);
		assert.match((await res.json()).message, /^locale must be one of/);
		const list = await api('GET', '/api/v1/payment/sessions?user_id=loc-x', merchant.key);
		assert.deepEqual(list.data, []);
		// The positive control: the same body with a shipped language is stored.
		await newSession({ user_id: 'loc-x', locale: 'fa-AF' });
		const again = await api('GET', '/api/v1/payment/sessions?user_id=loc-x', merchant.key);
		assert.equal(again.data.length, 1);
	});
});
