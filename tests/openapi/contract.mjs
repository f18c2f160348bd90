// The contract of doc/openapi.yaml as code: matches one recorded HTTP exchange (as
// tests/integ/http.c writes them) or one webhook delivery (as the stack's receiver logs them)
// to what the document says, validates it, and notes which documented fields it carried.
// Used by validate.mjs (the integration run) and selftest.mjs (the doctored exchanges).
import { readFileSync } from 'node:fs';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse as parseYaml } from 'yaml';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
// The worker answers these prefixes; anything else is nginx's alone (static files).
const SERVICE_PREFIXES = ['/api/v1/', '/checkout/'];
// Responses named by the rules of the document's description, not by an operation.
export const RULE_RESPONSES = ['NoSuchEndpoint', 'MethodNotAllowed'];

const DOC_ID = 'openapi.json';

function resolve(doc, node) {
	for (let depth = 0; node && node.$ref && depth < 20; depth++) {
		const parts = node.$ref.replace(/^#\//, '').split('/')
			.map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
		node = parts.reduce((n, p) => (n == null ? n : n[p]), doc);
	}
	return node;
}

function mediaType(ct) {
	return (ct || '').split(';')[0].trim().toLowerCase();
}

// Every property path a schema documents ("refund.reversals[].id"), with the schemas met.
function schemaPaths(doc, schema, prefix, out, depth = 0) {
	schema = resolve(doc, schema);
	if (!schema || typeof schema !== 'object' || depth > 30)
		return out;
	for (const k of ['allOf', 'oneOf', 'anyOf'])
		for (const s of schema[k] || [])
			schemaPaths(doc, s, prefix, out, depth + 1);
	if (schema.items)
		schemaPaths(doc, schema.items, prefix + '[]', out, depth + 1);
	for (const [name, sub] of Object.entries(schema.properties || {})) {
		const p = prefix ? `${prefix}.${name}` : name;
		out.add(p);
		schemaPaths(doc, sub, p, out, depth + 1);
	}
	return out;
}

// Every property path an instance carries with a value other than null.
function instancePaths(value, prefix, out) {
	if (Array.isArray(value)) {
		for (const v of value)
			instancePaths(v, prefix + '[]', out);
	} else if (value && typeof value === 'object') {
		for (const [k, v] of Object.entries(value)) {
			const p = prefix ? `${prefix}.${k}` : k;
			if (v !== null)
				out.add(p);
			instancePaths(v, p, out);
		}
	}
	return out;
}

export class Contract {
	constructor(docPath) {
		this.doc = parseYaml(readFileSync(docPath, 'utf8'));
		this.ajv = new Ajv2020({ strict: false, allErrors: true, multipleOfPrecision: 6 });
		addFormats(this.ajv);
		this.ajv.addSchema({ ...this.doc, $id: DOC_ID });
		this.validators = new Map();
		this.templates = Object.keys(this.doc.paths).map((t) => ({
			template: t,
			// One parameter is one non-empty path segment, as src/route.c matches it.
			re: new RegExp('^' + t.replace(/[.*+?^$()|[\]\\]/g, '\\$&')
				.replace(/\{[^}]+\}/g, '[^/]+') + '$'),
		}));
		// Header names some response declares: a reply carrying one must declare it.
		this.apiHeaders = new Set();
		const responses = [...Object.values(this.doc.components.responses || {})];
		for (const item of Object.values(this.doc.paths))
			for (const m of METHODS.filter((k) => item[k]))
				responses.push(...Object.values(item[m].responses || {}));
		for (const r of responses)
			for (const h of Object.keys(r.headers || {}))
				this.apiHeaders.add(h.toLowerCase());
		this.sent = new Map();       // coverage key -> Set of paths carried
		this.documented = new Map(); // coverage key -> Set of paths documented
		this.seenStatus = new Set();
		// Every documented JSON success body counts, whether the run produced it or not.
		for (const [path, item] of Object.entries(this.doc.paths))
			for (const m of METHODS.filter((k) => item[k]))
				for (const s of Object.keys(item[m].responses || {}).filter((k) => /^2/.test(k))) {
					const opPtr = `/paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${m}`;
					const r = this.responseFor(item[m], opPtr, s);
					if (r && r.node.content && r.node.content['application/json'])
						this.cover(`${m.toUpperCase()} ${path} ${s}`,
							`${r.ptr}/content/application~1json/schema`, null);
				}
		for (const type of Object.keys(this.doc.webhooks || {}))
			this.cover(`webhook ${type}`, `/webhooks/${type}/post/requestBody/content/application~1json/schema`, null);
	}

	// A compiled validator of the schema at JSON pointer ptr of the document.
	validator(ptr) {
		if (!this.validators.has(ptr))
			this.validators.set(ptr, this.ajv.compile({ $ref: `${DOC_ID}#${ptr}` }));
		return this.validators.get(ptr);
	}

	check(ptr, value) {
		const v = this.validator(ptr);
		if (v(value))
			return [];
		// The value that broke the rule goes with the message, cut short.
		const at = (p) => p.split('/').slice(1).map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'))
			.reduce((o, k) => (o == null ? o : o[k]), value);
		return v.errors.map((e) => `${e.instancePath || '(body)'} ${e.message}` +
			(e.params && e.params.additionalProperty ? ` (${e.params.additionalProperty})` : '') +
			(e.params && e.params.allowedValue !== undefined ? ` (${JSON.stringify(e.params.allowedValue)})` : '') +
			(['format', 'pattern', 'const', 'type', 'enum', 'maxLength', 'maximum'].includes(e.keyword) ?
				`, got ${JSON.stringify(at(e.instancePath)).slice(0, 80)}` : ''));
	}

	match(path) {
		const hits = this.templates.filter((t) => t.re.test(path));
		// A literal segment beats a parameter: the template with fewer braces wins.
		hits.sort((a, b) => (a.template.match(/\{/g) || []).length - (b.template.match(/\{/g) || []).length);
		return hits.length ? hits[0].template : null;
	}

	// Where a documented success body's fields are counted, and what it documents.
	cover(key, schemaPtr, body) {
		if (!this.documented.has(key)) {
			const schema = resolve(this.doc, { $ref: '#' + schemaPtr });
			this.documented.set(key, schemaPaths(this.doc, schema, '', new Set()));
			this.sent.set(key, new Set());
		}
		for (const p of instancePaths(body, '', new Set()))
			this.sent.get(key).add(p);
	}

	// The response object documented for status, with the JSON pointer of its node.
	responseFor(op, opPtr, status) {
		const r = op.responses || {};
		const key = [String(status), `${String(status)[0]}XX`, 'default'].find((k) => k in r);
		if (!key)
			return null;
		let ptr = `${opPtr}/responses/${key}`, node = r[key];
		if (node.$ref) {
			ptr = node.$ref.slice(1);
			node = resolve(this.doc, node);
		}
		return { node, ptr, key };
	}

	checkHeaders(resp, ptr, headers, problems) {
		const declared = Object.fromEntries(Object.entries(resp.headers || {})
			.map(([k, v]) => [k.toLowerCase(), { name: k, node: v }]));
		for (const [lname, { name, node }] of Object.entries(declared)) {
			const h = resolve(this.doc, node);
			if (!(lname in headers)) {
				if (h.required)
					problems.push(`header ${name} is missing`);
				continue;
			}
			const hPtr = node.$ref ? node.$ref.slice(1) : `${ptr}/headers/${name.replace(/\//g, '~1')}`;
			for (const e of this.check(`${hPtr}/schema`, headers[lname]))
				problems.push(`header ${name}: ${e}`);
		}
		// What the description of Request-Id says of every response of the service.
		if ('request-id' in headers && (headers['cache-control'] !== 'no-store' ||
		    headers['x-content-type-options'] !== 'nosniff'))
			problems.push('Cache-Control: no-store or X-Content-Type-Options: nosniff is missing');
		for (const lname of Object.keys(headers))
			if (this.apiHeaders.has(lname) && !(lname in declared))
				problems.push(`header ${lname} is not documented for this response`);
	}

	checkBody(resp, ptr, ct, body, problems) {
		const content = resp.content || {};
		const mt = mediaType(ct);
		if (Object.keys(content).length === 0) {
			if (body.length)
				problems.push('a body where none is documented');
			return undefined;
		}
		if (!(mt in content)) {
			problems.push(`content type ${ct || '(none)'} is not documented (${Object.keys(content).join(', ')})`);
			return undefined;
		}
		let value = body;
		if (mt === 'application/json') {
			try {
				value = JSON.parse(body);
			} catch {
				problems.push('the body is not JSON');
				return undefined;
			}
		}
		const sPtr = `${ptr}/content/${mt.replace(/\//g, '~1')}/schema`;
		for (const e of this.check(sPtr, value))
			problems.push(`body ${e}`);
		return { value, sPtr, mt };
	}

	// The request body of a successful exchange against the operation's requestBody.
	checkRequest(op, opPtr, x, problems) {
		const rb = resolve(this.doc, op.requestBody);
		if (!rb) {
			if (x.request_body)
				problems.push('a request body where none is documented');
			return;
		}
		if (!rb.required && !x.request_body)
			return;
		// A body of any type ('*/*') is one the endpoint ignores.
		const mt = '*/*' in (rb.content || {}) ? '*/*' : mediaType(x.request_content_type);
		if (!(mt in (rb.content || {}))) {
			problems.push(`request content type ${x.request_content_type || '(none)'} is not documented`);
			return;
		}
		let value = x.request_body || '';
		if (mt === 'application/json') {
			try {
				value = JSON.parse(value);
			} catch {
				problems.push('the request body is not JSON');
				return;
			}
		} else if (mt === 'application/x-www-form-urlencoded')
			value = Object.fromEntries(new URLSearchParams(value));
		const sPtr = `${opPtr}/requestBody/content/${mt.replace(/\//g, '~1')}/schema`;
		for (const e of this.check(sPtr, value))
			problems.push(`request body ${e}`);
	}

	// Problems of one recorded exchange ([] when it is as documented); null when it is
	// not the service's (no reply, or a path outside the worker's locations).
	exchange(x) {
		const [path] = x.path.split('?');
		if (!x.status || !SERVICE_PREFIXES.some((p) => path.startsWith(p)))
			return null;
		const headers = x.headers || {}, body = x.body || '';
		const problems = [];
		const template = this.match(path);
		let resp, key;
		if (template == null) {
			key = `${x.method} (no such path) ${x.status}`;
			resp = { node: resolve(this.doc, { $ref: '#/components/responses/NoSuchEndpoint' }),
				ptr: '/components/responses/NoSuchEndpoint' };
			if (x.status !== 404 && !this.frontServer(x.status))
				problems.push(`status ${x.status} for a path the document does not list (want 404)`);
		} else {
			const item = this.doc.paths[template];
			const methods = METHODS.filter((m) => item[m]);
			const m = x.method.toLowerCase();
			key = `${x.method} ${template} ${x.status}`;
			if (!item[m]) {
				resp = { node: resolve(this.doc, { $ref: '#/components/responses/MethodNotAllowed' }),
					ptr: '/components/responses/MethodNotAllowed' };
				const want = methods.map((s) => s.toUpperCase()).join(', ');
				if (x.status !== 405 && !this.frontServer(x.status))
					problems.push(`status ${x.status} for a method the path does not list (want 405)`);
				else if (x.status === 405 && (headers.allow || '').split(/,\s*/).sort().join(', ') !==
				    want.split(', ').sort().join(', '))
					problems.push(`Allow is "${headers.allow}", the document lists "${want}"`);
			} else {
				const opPtr = `/paths/${template.replace(/~/g, '~0').replace(/\//g, '~1')}/${m}`;
				resp = this.responseFor(item[m], opPtr, x.status);
				if (!resp)
					return [`${key}: status ${x.status} is not documented`];
				if (x.status >= 200 && x.status < 300)
					this.checkRequest(item[m], opPtr, x, problems);
			}
		}
		this.seenStatus.add(key);
		this.checkHeaders(resp.node, resp.ptr, headers, problems);
		const got = this.checkBody(resp.node, resp.ptr, headers['content-type'], body, problems);
		if (got && x.status >= 200 && x.status < 300 && got.mt === 'application/json')
			this.cover(key, got.sPtr, got.value);
		return problems.map((p) => `${key}: ${p}`);
	}

	// The front web server's own refusals (no Request-Id), documented as such.
	frontServer(status) {
		return [413, 414, 429, 431, 502].includes(status);
	}

	// Problems of one webhook delivery as the receiver logged it; null for an event the
	// service did not make: the webhook suites queue raw bodies of their own (outbox.c's
	// insert_event) to test delivery itself, none of them a JSON object with an id, which
	// every event of the service has (the webhook-id).
	webhook(w) {
		let body;
		try {
			body = JSON.parse(w.body);
		} catch {
			return null;
		}
		if (!body || typeof body !== 'object' || Array.isArray(body) || !('id' in body))
			return null;
		const hook = this.doc.webhooks && this.doc.webhooks[body.type];
		const key = `webhook ${body.type}`;
		if (!hook || !hook.post)
			return [`${key}: the event type is not documented`];
		const opPtr = `/webhooks/${body.type.replace(/~/g, '~0').replace(/\//g, '~1')}/post`;
		const problems = [];
		if (mediaType(w.content_type) !== 'application/json')
			problems.push(`content type ${w.content_type} is not application/json`);
		const values = { 'webhook-id': w.id, 'webhook-timestamp': w.timestamp,
			'webhook-signature': w.signature };
		(hook.post.parameters || []).forEach((p, i) => {
			const param = resolve(this.doc, p);
			const pPtr = p.$ref ? p.$ref.slice(1) : `${opPtr}/parameters/${i}`;
			const v = values[param.name.toLowerCase()];
			if (v === undefined || v === '')
				problems.push(`header ${param.name} is missing`);
			else
				for (const e of this.check(`${pPtr}/schema`, v))
					problems.push(`header ${param.name}: ${e}`);
		});
		if (body.id !== w.id)
			problems.push(`the body's id ${body.id} is not the webhook-id ${w.id}`);
		const sPtr = `${opPtr}/requestBody/content/application~1json/schema`;
		for (const e of this.check(sPtr, body))
			problems.push(`body ${e}`);
		this.seenStatus.add(key);
		this.cover(key, sPtr, body);
		return problems.map((p) => `${key} ${w.id}: ${p}`);
	}

	// "KEY FIELD" of every documented success field no exchange carried (with a value).
	unsent() {
		const out = [];
		for (const [key, doc] of this.documented)
			for (const p of doc)
				if (!this.sent.get(key).has(p))
					out.push(`${key} ${p}`);
		return out;
	}

	// Success replies and webhooks the document has that the run never produced.
	unseenSuccesses() {
		return [...this.unseenStatuses().filter((k) => / 2(XX|[0-9]{2})$/.test(k)),
			...Object.keys(this.doc.webhooks || {}).map((t) => `webhook ${t}`)
				.filter((k) => !this.seenStatus.has(k))];
	}

	// Documented statuses of the paths that no exchange of the run had.
	unseenStatuses() {
		const out = [];
		for (const [path, item] of Object.entries(this.doc.paths))
			for (const m of METHODS.filter((k) => item[k]))
				for (const s of Object.keys(item[m].responses || {}))
					if (!this.seenStatus.has(`${m.toUpperCase()} ${path} ${s}`))
						out.push(`${m.toUpperCase()} ${path} ${s}`);
		return out;
	}

	// Components no $ref names (other than the responses the rules name).
	unusedComponents() {
		const refs = new Set();
		const walk = (n) => {
			if (Array.isArray(n))
				n.forEach(walk);
			else if (n && typeof n === 'object')
				for (const [k, v] of Object.entries(n))
					if (k === '$ref' && typeof v === 'string')
						refs.add(v);
					else
						walk(v);
		};
		walk(this.doc);
		const out = [];
		for (const [kind, set] of Object.entries(this.doc.components || {}))
			for (const name of Object.keys(set))
				if (kind !== 'securitySchemes' && !refs.has(`#/components/${kind}/${name}`) &&
				    !(kind === 'responses' && RULE_RESPONSES.includes(name)))
					out.push(`#/components/${kind}/${name}`);
		return out;
	}
}
