// Helpers for the browser tests: the stack's CLI and API, the browser, and pages that
// leave a screenshot and their HTML behind when a test fails.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));

function need(name) {
	const v = process.env[name];
	if (!v)
		throw new Error(`${name} is not set: run the tests through tests/browser.sh ` +
		    '(or source the stack.env of a running tests/stack.sh stack)');
	return v;
}

export const baseUrl = need('MARKETPAY_BASE_URL').replace(/\/+$/, '');
const ctlBin = need('MARKETPAYCTL');
const config = need('MARKETPAY_CONFIG');

// Screenshots and failure dumps go here.
export const outDir = process.env.MP_TEST_OUT || join(here, 'out');
mkdirSync(outDir, { recursive: true });

// Generous but bounded: the stack answers in milliseconds, a cold browser takes seconds.
export const ACTION_TIMEOUT = 15_000;
export const NAV_TIMEOUT = 30_000;
export const TEST_TIMEOUT = 90_000;

// Landing pages on the stack's own nginx (/ceiling answers 200 by itself).
export const successUrl = `${baseUrl}/ceiling?r=success`;
export const failureUrl = `${baseUrl}/ceiling?r=failure`;

// Runs marketpayctl against the stack; returns its trimmed standard output.
export function ctl(args, input) {
	try {
		return execFileSync(ctlBin, ['-c', config, ...args], {
			input: input ?? '', encoding: 'utf8', timeout: 30_000,
			stdio: ['pipe', 'pipe', 'pipe'],
		}).trim();
	} catch (e) {
		throw new Error(`marketpayctl ${args.join(' ')} failed (status ${e.status}): ` +
		    `${e.stderr || e.message}`);
	}
}

// A merchant with an API key.
export function createMerchant(name) {
	const id = ctl(['merchant', 'create', '--name', name]);
	if (!/^\d+$/.test(id)) throw new Error(`merchant create printed ${JSON.stringify(id)}`);
	const key = ctl(['key', 'create', id]);
	if (!key) throw new Error('key create printed nothing');
	return { id, name, key };
}

// A customer wallet with money in it and a PIN.
export function createWallet(deposit = '100.00', pin = '1234') {
	const account = ctl(['account', 'create', '--kind', 'customer']);
	if (!/^\S+$/.test(account)) throw new Error(`account create printed ${JSON.stringify(account)}`);
	ctl(['account', 'deposit', account, deposit]);
	ctl(['account', 'pin', account], `${pin}\n`);
	return { account, pin };
}

// The account's balance, from `account show` (a "balance<TAB>N.NN" line).
export function balance(account) {
	const line = ctl(['account', 'show', account]).split('\n')
	    .find((l) => l.startsWith('balance\t'));
	if (!line) throw new Error(`account show ${account}: no balance line`);
	return line.split('\t')[1];
}

// `ledger verify` exits 0 when the ledger is consistent (ctl throws otherwise).
export function ledgerVerify() {
	return ctl(['ledger', 'verify']);
}

// Points the merchant's webhooks at the stack's receiver; returns the signing secret.
export function receiveWebhooks(merchant) {
	const secret = ctl(['merchant', 'webhook', merchant.id, '--url',
	    need('MARKETPAY_WEBHOOK_RECEIVER')]).split('\n')[0];
	if (!secret.startsWith('whsec_')) throw new Error(`merchant webhook printed ${secret}`);
	return secret;
}

// What the stack's receiver logged of each delivery: its Standard Webhooks headers and the
// exact body (one JSON line each).
function deliveries() {
	const log = join(need('MARKETPAY_STACK_DIR'), 'webhooks.log');
	if (!existsSync(log)) return [];
	return readFileSync(log, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
}

// Waits for n deliveries whose body holds needle (the receiver answered 2xx); returns them.
export async function waitForDeliveries(needle, n, timeout = 20_000) {
	for (const end = Date.now() + timeout; ;) {
		const got = deliveries().filter((d) => d.body.includes(needle) && d.status < 300);
		if (got.length >= n || Date.now() > end) return got;
		await new Promise((r) => setTimeout(r, 200));
	}
}

// The payment forms of an open checkout page: the form, its inputs by our names, its button.
function payForm(page, kind, inputs) {
	const form = page.locator(`form.pay.${kind}`);
	const f = { form, button: form.locator('button[type="submit"]') };
	for (const [key, name] of Object.entries(inputs))
		f[key] = form.locator(`input[name="${name}"]`);
	return f;
}

export function walletForm(page) {
	return payForm(page, 'wallet', { account: 'account_number', pin: 'pin' });
}

export function cardForm(page) {
	return payForm(page, 'test-card', { number: 'card_number', expiry: 'card_expiry',
	    cvc: 'card_cvc' });
}

// A merchant API call: the parsed reply, or an Error naming the status and body.
export async function api(method, path, key, body, headers = {}) {
	const res = await fetch(`${baseUrl}${path}`, {
		method,
		headers: {
			Authorization: `API-KEY ${key}`,
			...(body ? { 'Content-Type': 'application/json' } : {}),
			...headers,
		},
		body: body ? JSON.stringify(body) : undefined,
		signal: AbortSignal.timeout(NAV_TIMEOUT),
	});
	const text = await res.text();
	let json;
	try {
		json = JSON.parse(text);
	} catch {
		throw new Error(`${method} ${path}: ${res.status}, not JSON: ${text.slice(0, 200)}`);
	}
	if (!res.ok || json.success !== true)
		throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
	return json;
}

// A new payment session; returns { session_id, url, ... }.
export function createSession(merchant, { items, userId = 'order-1' } = {}) {
	return api('POST', '/api/v1/payment/create-session', merchant.key, {
		items: items ?? [{ id: 'sku-1', name: 'Green tea', price: 12.50 }],
		user_id: userId,
		redirect_success_url: successUrl,
		redirect_failure_url: failureUrl,
	});
}

export function getSession(merchant, id) {
	return api('GET', `/api/v1/payment/sessions/${encodeURIComponent(id)}`, merchant.key);
}

export const CHROMIUM = process.env.MP_CHROMIUM || '/usr/bin/chromium';

export function launch() {
	return chromium.launch({
		executablePath: CHROMIUM,
		// A fresh temporary profile is made (and removed) by playwright for each launch.
		args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
		    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
		timeout: 60_000,
	});
}

function fileSafe(s) {
	return s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-|-$/g, '').slice(0, 80) || 'test';
}

// Runs fn(page, context) in a new browser context; if fn throws, leaves fail-NAME.png and
// fail-NAME.html in outDir. The context is always closed.
export async function withPage(browser, t, options, fn) {
	const context = await browser.newContext({
		viewport: { width: 1280, height: 800 },
		...options,
	});
	context.setDefaultTimeout(ACTION_TIMEOUT);
	context.setDefaultNavigationTimeout(NAV_TIMEOUT);
	const page = await context.newPage();
	try {
		return await fn(page, context);
	} catch (e) {
		const base = join(outDir, `fail-${fileSafe(t.name)}`);
		try {
			await page.screenshot({ path: `${base}.png`, fullPage: true, timeout: 10_000 });
			writeFileSync(`${base}.html`, `<!-- ${page.url()} -->\n${await page.content()}`);
			t.diagnostic(`page at failure: ${page.url()} (saved ${base}.png, ${base}.html)`);
		} catch { /* the page may be gone: the error below matters more */ }
		throw e;
	} finally {
		await context.close().catch(() => {});
	}
}

// Clicks a form's submit button; returns the response to the form's POST (a 303 for an
// outcome, a page of its own for a retry). Callers then wait for where the browser lands.
export async function submitForm(page, button) {
	const [response] = await Promise.all([
		page.waitForResponse((r) => r.request().method() === 'POST' &&
		    new URL(r.url()).pathname.startsWith('/checkout/'), { timeout: NAV_TIMEOUT }),
		button.click(),
	]);
	return response;
}

// Waits until the browser has landed on the landing page ?r=WHICH (success or failure) and
// returns that URL's query.
export async function landedOn(page, which) {
	await page.waitForURL((u) => u.pathname === '/ceiling' && u.searchParams.get('r') === which,
	    { timeout: NAV_TIMEOUT, waitUntil: 'load' });
	return new URL(page.url()).searchParams;
}

// An expiry date (MM/YY) two years ahead.
export function futureExpiry() {
	const d = new Date();
	return `${String(d.getMonth() + 1).padStart(2, '0')}/${String((d.getFullYear() + 2) % 100).padStart(2, '0')}`;
}
