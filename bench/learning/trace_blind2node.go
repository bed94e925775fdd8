package main

import "fmt"

// blind2NodeTrace is an event ticketing service (a box office) in plain
// Node (ESM), written after orket's learning rules were frozen, by
// someone who had not read them: events and venues (a venue list
// generated from venues.txt), seats (holds, and a seat-lock store on a
// local Redis, 127.0.0.1:16411), pricing (fees, price formatting), tickets
// (signed with a key read from the environment when tokens.js loads;
// rendered as text), checkout, receipts, mail (templates, a relay whose
// test times out now and then), http (a server on 18642, a generated
// route list), errors (generated codes), refunds, waitlist; db/schema.sql
// with db/migrations. node --test runs the tests; the project's own
// scripts/lint.js lints src (no-var, no-console, eqeqeq); golden outputs
// live in test/golden (protected); settings in config/default.json.
//
// Where its hazards show: "BOXOFFICE_SIGNING_KEY is not set" thrown as
// the ticket and checkout tests load; a list changed without npm run gen
// fails test/generated.test.js; a column or table added to db/schema.sql
// without a migration fails test/migrations.test.js; signature changes in
// pricing, seats and tickets break checkout and receipts (TypeError, a
// missing export); lint in four modules; EADDRINUSE on 18642; ECONNREFUSED
// from the seat-lock Redis; a flaky mail relay test; the golden files
// protected; a reviewer's no to config/default.json.
func blind2NodeTrace() Trace {
	tr := Trace{
		Name: "blind2node",
		Need: []string{"node"},
		Files: map[string]string{
			".gitignore": "node_modules/\n",
			"package.json": `{
  "name": "boxoffice",
  "version": "0.9.0",
  "private": true,
  "type": "module",
  "scripts": {
    "test": "node --test",
    "lint": "node scripts/lint.js src",
    "gen": "node scripts/codegen.js",
    "golden": "node scripts/update-golden.js"
  }
}
`,
			"README.md": `# boxoffice

Sells seats for events: holds, checkout, signed tickets, receipts and
reminder mails, and an HTTP API for the box office app.

Local setup:

- export BOXOFFICE_SIGNING_KEY (any value in development);
- run Redis on 127.0.0.1:16411 for seat locks (docker compose up -d redis);
- npm run gen after changing venues.txt, routes.txt or codes.txt;
- npm run lint and npm test before pushing.

Schema changes need a migration in db/migrations. test/golden holds the
approved outputs: a change to them goes through design review.
`,
			"orket.yaml": `version: 1
verify:
  default: check
  profiles:
    check:
      fail_fast: false
      steps:
        - {name: lint, run: node scripts/lint.js src}
        - {name: test, run: node --test, retry: 1}
protect: ['test/golden/**']
sandbox: off
`,
			"config/default.json": `{
  "holdTtlSeconds": 600,
  "maxTicketsPerOrder": 8,
  "currency": "EUR"
}
`,
			"scripts/lint.js": `// The project's lint: node scripts/lint.js DIR. Rules:
//   no-var      declare with let or const
//   no-console  log through src/log.js
//   eqeqeq      compare with === and !==
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const rules = [
  { id: 'no-var', re: /(^|[^\w.$])var\s+[\w$]/, msg: 'Unexpected var, use let or const instead' },
  { id: 'no-console', re: /\bconsole\.(log|info|warn|error|debug)\(/, msg: 'Unexpected console statement (log through src/log.js)' },
  { id: 'eqeqeq', re: /[^=!<>]==[^=]|!=[^=]/, msg: "Expected '===' and instead saw '=='" },
];

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      return files(p);
    }
    return p.endsWith('.js') && !p.endsWith('.gen.js') ? [p] : [];
  });
}

let problems = 0;
for (const file of files(process.argv[2] ?? 'src')) {
  readFileSync(file, 'utf8').split('\n').forEach((line, i) => {
    if (line.trim().startsWith('//')) {
      return;
    }
    for (const rule of rules) {
      if (rule.re.test(line)) {
        process.stdout.write(` + "`${file}:${i + 1}: error  ${rule.msg}  ${rule.id}\\n`" + `);
        problems++;
      }
    }
  });
}
if (problems > 0) {
  process.stdout.write(` + "`\\n${problems} problem(s)\\n`" + `);
  process.exit(1);
}
`,
			"scripts/codegen.js": `// Regenerates the lists the code imports: node scripts/codegen.js (npm run gen).
import { writeFileSync } from 'node:fs';
import { TARGETS, expected } from './targets.js';

for (const target of TARGETS) {
  writeFileSync(target.out, expected(target));
}
`,
			"scripts/targets.js": `// What scripts/codegen.js generates, and from what.
import { readFileSync } from 'node:fs';

export const TARGETS = [
  { src: 'src/venues/venues.txt', out: 'src/venues/venues.gen.js', name: 'VENUES' },
  { src: 'src/http/routes.txt', out: 'src/http/routes.gen.js', name: 'ROUTES' },
  { src: 'src/errors/codes.txt', out: 'src/errors/codes.gen.js', name: 'CODES' },
];

export function expected(target) {
  const lines = readFileSync(target.src, 'utf8').split('\n').map((l) => l.trim()).filter((l) => l !== '');
  return [
    ` + "`// Generated by scripts/codegen.js from ${target.src}. Do not edit: run npm run gen.`" + `,
    ` + "`export const ${target.name} = Object.freeze([`" + `,
    ...lines.map((l) => ` + "`  ${JSON.stringify(l)},`" + `),
    ']);',
    '',
  ].join('\n');
}
`,
			"scripts/fixtures.js": `// The orders and tickets the golden outputs are rendered from.
export const order = { id: 'ord_1001', customer: 'Grace Hopper', event: 'Jazz at the Pier', seats: ['A1', 'A2'], face: 4500, fee: 450 };
export const ticket = { id: 'tkt_77', event: 'Jazz at the Pier', date: '2024-06-01 20:00', venue: 'pier-hall', seat: 'A1' };
export const reminder = { name: 'Grace', event: 'Jazz at the Pier', hours: 24 };
`,
			"scripts/update-golden.js": `// Rewrites test/golden from the renderers: node scripts/update-golden.js.
// Only after a design review: test/golden is what customers see.
import { mkdirSync, writeFileSync } from 'node:fs';
import { renderReceipt } from '../src/receipts/render.js';
import { renderTicket } from '../src/tickets/render.js';
import { reminderEmail } from '../src/mail/templates.js';
import { order, ticket, reminder } from './fixtures.js';

mkdirSync('test/golden', { recursive: true });
writeFileSync('test/golden/receipt.txt', renderReceipt(order));
writeFileSync('test/golden/ticket.txt', renderTicket(ticket));
writeFileSync('test/golden/reminder.txt', reminderEmail(reminder.name, reminder.event, reminder.hours));
`,
			"src/log.js": `// The service's log: one JSON line per record on stderr.
export function log(level, msg, fields = {}) {
  process.stderr.write(JSON.stringify({ level, msg, ...fields }) + '\n');
}
`,
			"src/config.js": `// Settings: config/default.json, overridden by BOXOFFICE_<NAME> variables.
import { readFileSync } from 'node:fs';

const defaults = JSON.parse(readFileSync(new URL('../config/default.json', import.meta.url), 'utf8'));

export function setting(name, fallback) {
  const env = process.env['BOXOFFICE_' + name.replace(/[A-Z]/g, (c) => '_' + c).toUpperCase()];
  if (env !== undefined) {
    return typeof fallback === 'number' ? Number(env) : env;
  }
  return defaults[name] ?? fallback;
}
`,
			"src/auth/tokens.js": `// Ticket tokens: the HMAC printed in each ticket's QR code.
import { createHmac, timingSafeEqual } from 'node:crypto';

const key = process.env.BOXOFFICE_SIGNING_KEY;
if (!key) {
  throw new Error('BOXOFFICE_SIGNING_KEY is not set: tickets cannot be signed (see README, local setup)');
}

export function signTicket(id) {
  return createHmac('sha256', key).update(id).digest('base64url');
}

export function verifyTicket(id, sig) {
  const want = Buffer.from(signTicket(id));
  const got = Buffer.from(String(sig));
  return want.length === got.length && timingSafeEqual(want, got);
}
`,
			"src/venues/venues.txt": "pier-hall\nold-theatre\nriverside-arena\n",
			"src/venues/index.js": `// Venues we sell for.
import { VENUES } from './venues.gen.js';

export function knownVenue(id) {
  return VENUES.includes(id);
}
`,
			"src/events/index.js": `// Events: a show at a venue on a date.
import { knownVenue } from '../venues/index.js';
import { AppError } from '../errors/index.js';

export function createEvent(venue, name, date) {
  if (!knownVenue(venue)) {
    throw new AppError('E_VENUE_UNKNOWN', ` + "`events: unknown venue ${venue}`" + `);
  }
  if (Number.isNaN(Date.parse(date))) {
    throw new AppError('E_DATE_INVALID', ` + "`events: bad date ${date}`" + `);
  }
  return { id: ` + "`${venue}:${date}`" + `, venue, name, date };
}
`,
			"src/errors/codes.txt": "E_VENUE_UNKNOWN\nE_DATE_INVALID\nE_SEATS_TAKEN\nE_HOLD_EXPIRED\n",
			"src/errors/index.js": `// The service's errors carry a code from codes.txt.
import { CODES } from './codes.gen.js';

export class AppError extends Error {
  constructor(code, message) {
    super(message);
    if (!CODES.includes(code)) {
      throw new TypeError(` + "`errors: unknown code ${code}`" + `);
    }
    this.code = code;
  }
}
`,
			"src/seats/holds.js": `// Seat holds: seats kept for a buyer while they check out.
import { setting } from '../config.js';

export function holdSeats(eventId, seats, ttlSeconds = setting('holdTtlSeconds', 600)) {
  if (!Array.isArray(seats) || seats.length === 0) {
    throw new RangeError('holds: no seats to hold');
  }
  if (seats.length > setting('maxTicketsPerOrder', 8)) {
    throw new RangeError(` + "`holds: ${seats.length} seats is more than one order may hold`" + `);
  }
  return { eventId, seats: [...seats], expiresAt: Date.now() + ttlSeconds * 1000 };
}
`,
			"src/seats/lock.js": `// The seat-lock store: Redis, on 127.0.0.1:16411 in development.
import net from 'node:net';

export const LOCK_PORT = 16411;

export function pingLocks(host = '127.0.0.1', port = LOCK_PORT) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, host);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.end();
      resolve(true);
    });
  });
}
`,
			"src/pricing/fees.js": `// Fees added to a ticket's face value, in cents.

export function serviceFee(face) {
  return Math.max(150, Math.round(face * 0.1));
}

export function vat(amount, rate = 0.2) {
  return Math.round(amount * rate);
}
`,
			"src/pricing/format.js": `// Prices as customers read them.

export function formatPrice(cents) {
  return ` + "`${(cents / 100).toFixed(2)} EUR`" + `;
}
`,
			"src/tickets/issue.js": `// Issuing tickets: one per seat, signed.
import { randomUUID } from 'node:crypto';
import { signTicket } from '../auth/tokens.js';

export function issueTicket(order, seat) {
  const id = 'tkt_' + randomUUID().slice(0, 8);
  return { id, eventId: order.eventId, seat, face: order.face, sig: signTicket(id) };
}
`,
			"src/tickets/render.js": `// A ticket as printed at home.

export function renderTicket(t) {
  return [
    'BOXOFFICE TICKET',
    ` + "`${t.event}`" + `,
    ` + "`${t.date} at ${t.venue}`" + `,
    ` + "`Seat ${t.seat}`" + `,
    ` + "`Ticket ${t.id}`" + `,
    '',
  ].join('\n');
}
`,
			"src/checkout/index.js": `// Checkout: hold the seats, price them, issue the tickets.
import { holdSeats } from '../seats/holds.js';
import { serviceFee } from '../pricing/fees.js';
import { issueTicket } from '../tickets/issue.js';

export function checkout(eventId, seats, face) {
  const hold = holdSeats(eventId, seats);
  const fee = serviceFee(face);
  const tickets = hold.seats.map((seat) => issueTicket({ eventId, face }, seat));
  return { eventId, tickets, fee, total: (face + fee) * tickets.length };
}
`,
			"src/receipts/render.js": `// The receipt mailed after checkout.
import { formatPrice } from '../pricing/format.js';

export function renderReceipt(order) {
  const lines = order.seats.map((s) => ` + "`  Seat ${s.padEnd(6)} ${formatPrice(order.face)}`" + `);
  const total = (order.face + order.fee) * order.seats.length;
  return [
    ` + "`Receipt ${order.id}`" + `,
    ` + "`${order.customer}, ${order.event}`" + `,
    ...lines,
    ` + "`  Service fees   ${formatPrice(order.fee * order.seats.length)}`" + `,
    ` + "`Total          ${formatPrice(total)}`" + `,
    '',
  ].join('\n');
}
`,
			"src/mail/templates.js": `// Mails sent to buyers.

export function reminderEmail(name, event, hours) {
  return ` + "`Subject: ${event} starts in ${hours} hours\\n\\nHi ${name},\\n\\nsee you soon at ${event}. Your tickets are attached again.\\n`" + `;
}

export function confirmationEmail(name, event) {
  return ` + "`Subject: Your tickets for ${event}\\n\\nHi ${name},\\n\\nthank you for your order.\\n`" + `;
}
`,
			"src/mail/relay.js": `// Hands mails to the SMTP relay (a fake one in tests).

export async function sendMail(transport, to, body) {
  if (!to.includes('@')) {
    throw new RangeError(` + "`mail: bad address ${to}`" + `);
  }
  return transport.send({ to, body });
}
`,
			"src/http/routes.txt": "/events\n/checkout\n/tickets\n",
			"src/http/server.js": `// The box office app's HTTP API.
import http from 'node:http';
import { ROUTES } from './routes.gen.js';

export const PORT = 18642;

export function handler(req, res) {
  const path = new URL(req.url, 'http://localhost').pathname;
  res.statusCode = path === '/healthz' || ROUTES.includes(path) ? 200 : 404;
  res.end();
}

export function start(port = PORT) {
  return new Promise((resolve, reject) => {
    const server = http.createServer(handler);
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
`,
			"src/refunds/index.js": `// Refunds of tickets before the show.

export function refundable(ticket, now, showAt) {
  return now < showAt && !ticket.scanned;
}
`,
			"src/waitlist/index.js": `// The waitlist of a sold-out event.

export function joinWaitlist(list, email) {
  if (list.includes(email)) {
    return list;
  }
  return [...list, email];
}
`,
			"db/schema.sql": `CREATE TABLE events (
  id TEXT PRIMARY KEY,
  venue TEXT NOT NULL,
  name TEXT NOT NULL,
  starts_at TIMESTAMP NOT NULL
);

CREATE TABLE orders (
  id TEXT PRIMARY KEY,
  event_id TEXT NOT NULL REFERENCES events (id),
  customer TEXT NOT NULL,
  total_cents INTEGER NOT NULL
);

CREATE TABLE tickets (
  id TEXT PRIMARY KEY,
  order_id TEXT NOT NULL REFERENCES orders (id),
  seat TEXT NOT NULL
);
`,
			"db/migrations/001_events.sql": `CREATE TABLE events (
  id TEXT PRIMARY KEY,
  venue TEXT NOT NULL,
  name TEXT NOT NULL,
  starts_at TIMESTAMP NOT NULL
);
`,
			"db/migrations/002_orders_tickets.sql": `CREATE TABLE orders (
  id TEXT PRIMARY KEY,
  event_id TEXT NOT NULL REFERENCES events (id),
  customer TEXT NOT NULL,
  total_cents INTEGER NOT NULL
);

CREATE TABLE tickets (
  id TEXT PRIMARY KEY,
  order_id TEXT NOT NULL REFERENCES orders (id),
  seat TEXT NOT NULL
);
`,
			"test/migrations.test.js": `import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';

// columns returns the table.column names the SQL creates.
function columns(sql) {
  const out = new Set();
  for (const [, table, body] of sql.matchAll(/CREATE TABLE (\w+) \(([\s\S]*?)\);/gi)) {
    for (const line of body.split('\n')) {
      const word = line.trim().split(/\s+/)[0].replace(/,$/, '');
      if (word && !/^(PRIMARY|UNIQUE|CONSTRAINT|FOREIGN|CHECK)$/i.test(word)) {
        out.add(` + "`${table}.${word}`" + `);
      }
    }
  }
  for (const [, table, column] of sql.matchAll(/ALTER TABLE (\w+) ADD COLUMN (\w+)/gi)) {
    out.add(` + "`${table}.${column}`" + `);
  }
  return out;
}

test('every column of db/schema.sql has a migration', () => {
  const migrated = new Set();
  for (const f of readdirSync('db/migrations').sort()) {
    for (const c of columns(readFileSync(` + "`db/migrations/${f}`" + `, 'utf8'))) {
      migrated.add(c);
    }
  }
  for (const c of columns(readFileSync('db/schema.sql', 'utf8'))) {
    assert.ok(migrated.has(c), ` + "`db/schema.sql has ${c} but no migration in db/migrations creates it`" + `);
  }
});
`,
			"test/generated.test.js": `import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { TARGETS, expected } from '../scripts/targets.js';

for (const target of TARGETS) {
  test(` + "`${target.out} matches ${target.src}`" + `, () => {
    assert.equal(readFileSync(target.out, 'utf8'), expected(target), ` + "`${target.out} is stale: run npm run gen`" + `);
  });
}
`,
			"test/checkout.test.js": `import test from 'node:test';
import assert from 'node:assert/strict';
import { checkout } from '../src/checkout/index.js';
import { verifyTicket } from '../src/auth/tokens.js';

test('checkout issues one signed ticket per seat', () => {
  const order = checkout('pier-hall:2024-06-01', ['A1', 'A2'], 4500);
  assert.equal(order.tickets.length, 2);
  for (const t of order.tickets) {
    assert.ok(verifyTicket(t.id, t.sig));
  }
  assert.equal(order.total, 2 * (4500 + 450));
});

test('checkout refuses an empty order', () => {
  assert.throws(() => checkout('pier-hall:2024-06-01', [], 4500), RangeError);
});
`,
			"test/tickets.test.js": `import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { signTicket, verifyTicket } from '../src/auth/tokens.js';
import { renderTicket } from '../src/tickets/render.js';
import { ticket } from '../scripts/fixtures.js';

test('a ticket signature verifies, a forged one does not', () => {
  assert.ok(verifyTicket('tkt_1', signTicket('tkt_1')));
  assert.ok(!verifyTicket('tkt_1', signTicket('tkt_2')));
});

test('the printed ticket is the approved one', () => {
  assert.equal(renderTicket(ticket), readFileSync('test/golden/ticket.txt', 'utf8'));
});
`,
			"test/receipts.test.js": `import test from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { renderReceipt } from '../src/receipts/render.js';
import { order } from '../scripts/fixtures.js';

test('the receipt is the approved one', () => {
  assert.equal(renderReceipt(order), readFileSync('test/golden/receipt.txt', 'utf8'));
});
`,
			"test/mail.test.js": `import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { reminderEmail } from '../src/mail/templates.js';
import { sendMail } from '../src/mail/relay.js';
import { reminder } from '../scripts/fixtures.js';

test('the reminder mail is the approved one', () => {
  assert.equal(reminderEmail(reminder.name, reminder.event, reminder.hours), readFileSync('test/golden/reminder.txt', 'utf8'));
});

test('the confirmation mail is handed to the relay in time', async () => {
  const sent = [];
  const transport = { send: async (m) => { sent.push(m); return 'queued'; } };
  // The relay container is slow to accept on a busy CI runner now and then.
  const flag = process.env.FLAKE;
  if (flag && !existsSync(flag)) {
    writeFileSync(flag, '');
    throw new Error('mail: relay did not accept the message within 3000ms');
  }
  assert.equal(await sendMail(transport, 'grace@example.com', 'hi'), 'queued');
  assert.equal(sent.length, 1);
});
`,
			"test/seats.test.js": `import test from 'node:test';
import assert from 'node:assert/strict';
import { holdSeats } from '../src/seats/holds.js';
import { pingLocks } from '../src/seats/lock.js';

test('a hold keeps the seats', () => {
  const hold = holdSeats('pier-hall:2024-06-01', ['B4']);
  assert.deepEqual(hold.seats, ['B4']);
  assert.ok(hold.expiresAt > Date.now());
});

test('the seat-lock store answers', async () => {
  assert.equal(await pingLocks(), true);
});
`,
			"test/http.test.js": `import test from 'node:test';
import assert from 'node:assert/strict';
import { start, PORT } from '../src/http/server.js';

test('the server serves its routes on its port', async () => {
  const server = await start();
  try {
    const res = await fetch(` + "`http://127.0.0.1:${PORT}/events`" + `);
    assert.equal(res.status, 200);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
`,
			"test/events.test.js": `import test from 'node:test';
import assert from 'node:assert/strict';
import { createEvent } from '../src/events/index.js';
import { formatPrice } from '../src/pricing/format.js';
import { serviceFee } from '../src/pricing/fees.js';

test('createEvent needs a known venue', () => {
  assert.equal(createEvent('pier-hall', 'Jazz', '2024-06-01').venue, 'pier-hall');
  assert.throws(() => createEvent('moon-base', 'Jazz', '2024-06-01'), /unknown venue/);
});

test('fees and prices', () => {
  assert.equal(serviceFee(4500), 450);
  assert.equal(formatPrice(4950), '49.50 EUR');
});
`,
		},
		Setup: []string{"node scripts/codegen.js", "node scripts/update-golden.js", "node scripts/lint.js src"},
		Vault: map[string]string{"BOXOFFICE_SIGNING_KEY": "bo_dev_key_31f"},
		Ports: map[string]int{"http": 18642, "service-redis": 16411},
	}
	// What a competent Node agent does, once it is told about the hazard.
	env := Remedy{Trigger: `BOXOFFICE_SIGNING_KEY`, SetEnv: []string{"BOXOFFICE_SIGNING_KEY"}}
	port := Remedy{Trigger: `18642|EADDRINUSE`, Free: []string{"http"}}
	redis := Remedy{Trigger: `16411|(?i)redis`, Start: []string{"service-redis"}}
	regen := Remedy{Trigger: `npm run gen|scripts/codegen\.js|\.gen\.js`, Edit: Edit{Run: []string{"node scripts/codegen.js"}}}
	migration := func(path, sql string) Remedy {
		return Remedy{Trigger: `(?i)no migration|without a migration|missing migration|needs a migration|add a migration`, Edit: Edit{Write: map[string]string{path: sql}}}
	}
	// Told that the lint fails here, the agent runs it and fixes what it
	// reports in its own change.
	lint := func(path, old, new string) Remedy {
		return Remedy{Trigger: `scripts/lint\.js|no-var|no-console|eqeqeq|Unexpected var|Unexpected console|Expected '==='`,
			Edit: Edit{Replace: []Replacement{{path, old, new}}}}
	}
	// A signature change that breaks callers outside the task's scope:
	// the competent change keeps the old function and adds one.
	sig := func(path, fn, old, new, added string) (Edit, Remedy) {
		return Edit{Replace: []Replacement{{path, old, new}}},
			Remedy{Trigger: `Cannot read properties of undefined|does not provide an export named|is not a function|callers|signature|` + fn,
				Skip: []string{path}, Edit: Edit{Append: map[string]string{path: added}}}
	}
	// test/golden is protected: told so, the agent leaves the approved
	// output alone and adds what the task needs beside it.
	golden := func(code, old, new, gold, goldOld, goldNew, added string) (Edit, Remedy) {
		return Edit{Replace: []Replacement{{code, old, new}, {gold, goldOld, goldNew}}},
			Remedy{Trigger: `test/golden`, Skip: []string{code, gold}, Edit: Edit{Append: map[string]string{code: added}}}
	}
	// A new setting in config/default.json: the reviewer's standing no.
	// Told so, the agent keeps the default in code (setting's fallback).
	review := &Review{Paths: []string{"config/default.json"},
		Reason: "config/default.json is production's config and ops own it: no new keys in feature changes, keep the default in code with setting(name, fallback)"}
	setting := func(path, fn, key, value string) (Edit, Remedy) {
		e := Edit{Replace: []Replacement{{"config/default.json", "{\n", "{\n  \"" + key + "\": " + value + ",\n"}},
			Append: map[string]string{path: fmt.Sprintf("\nexport function %s() {\n  return setting('%s', %s);\n}\n", fn, key, value)}}
		if path != "src/seats/holds.js" {
			e.Replace = append(e.Replace, Replacement{path, "\n\nexport function", "\nimport { setting } from '../config.js';\n\nexport function"})
		}
		return e, Remedy{Trigger: `config/default\.json|(?i)ops own`, Skip: []string{"config/default.json"}}
	}
	fn := func(path, name string) Edit {
		return Edit{Append: map[string]string{path: fmt.Sprintf("\nexport function %s() {\n  return %d;\n}\n", name, len(name))}}
	}

	feeEdit, feeFix := sig("src/pricing/fees.js", "serviceFee", "export function serviceFee(face) {\n  return Math.max(150, Math.round(face * 0.1));",
		"export function serviceFee(face, policy) {\n  return Math.max(policy.minimum, Math.round(face * policy.percent / 100));",
		"\nexport function serviceFeeWith(face, policy) {\n  return Math.max(policy.minimum, Math.round(face * policy.percent / 100));\n}\n")
	holdEdit, holdFix := sig("src/seats/holds.js", "holdSeats", "export function holdSeats(eventId, seats, ttlSeconds = setting('holdTtlSeconds', 600)) {",
		"export function holdSeats({ eventId, seats, ttlSeconds = setting('holdTtlSeconds', 600) }) {",
		"\nexport function holdSeatsFor({ eventId, seats, ttlSeconds }) {\n  return holdSeats(eventId, seats, ttlSeconds);\n}\n")
	issueEdit, issueFix := sig("src/tickets/issue.js", "issueTicket", "export function issueTicket(order, seat) {",
		"export function createTicket(order, seat) {",
		"\nexport function createTicket(order, seat) {\n  return issueTicket(order, seat);\n}\n")
	priceEdit, priceFix := sig("src/pricing/format.js", "formatPrice", "export function formatPrice(cents) {\n  return `${(cents / 100).toFixed(2)} EUR`;",
		"export function formatPrice(cents, currency) {\n  return `${(cents / 100).toFixed(2)} ${currency.toUpperCase()}`;",
		"\nexport function formatPriceIn(cents, currency) {\n  return `${(cents / 100).toFixed(2)} ${currency.toUpperCase()}`;\n}\n")

	receiptEdit, receiptFix := golden("src/receipts/render.js", "    `Total          ${formatPrice(total)}`,\n", "    `Total          ${formatPrice(total)}`,\n    'Tickets are non-refundable within 48 hours of the show.',\n",
		"test/golden/receipt.txt", "Total          99.00 EUR\n", "Total          99.00 EUR\nTickets are non-refundable within 48 hours of the show.\n",
		"\nexport function refundNotice(hours = 48) {\n  return `Tickets are non-refundable within ${hours} hours of the show.`;\n}\n")
	ticketEdit, ticketFix := golden("src/tickets/render.js", "    `Seat ${t.seat}`,\n", "    `Seat ${t.seat} (doors open 30 min before)`,\n",
		"test/golden/ticket.txt", "Seat A1\n", "Seat A1 (doors open 30 min before)\n",
		"\nexport function doorsNote(minutes = 30) {\n  return `Doors open ${minutes} min before the show.`;\n}\n")
	reminderEdit, reminderFix := golden("src/mail/templates.js", "Your tickets are attached again.", "Your tickets are attached again; show the QR code at the door.",
		"test/golden/reminder.txt", "Your tickets are attached again.", "Your tickets are attached again; show the QR code at the door.",
		"\nexport function doorHint() {\n  return 'Show the QR code at the door.';\n}\n")

	waitEdit, waitFix := setting("src/waitlist/index.js", "waitlistSize", "waitlistSize", "50")
	refundEdit, refundFix := setting("src/refunds/index.js", "refundWindowHours", "refundWindowHours", "48")
	holdCapEdit, holdCapFix := setting("src/seats/holds.js", "maxHoldsPerCustomer", "maxHoldsPerCustomer", "2")

	tr.Tasks = []Task{
		{ID: "t01", Scope: []string{"src/events"}, Edit: Edit{Append: map[string]string{"src/events/index.js": "\nexport function isPast(event, now = Date.now()) {\n  return Date.parse(event.date) < now;\n}\n"}}},
		{ID: "t02", Scope: []string{"src/venues"}, Hazard: "gen", Edit: Edit{Append: map[string]string{"src/venues/venues.txt": "harbour-club\n"}}, Remedies: []Remedy{regen}},
		{ID: "t03", Scope: []string{"src/pricing"}, Hazard: "env", Unset: []string{"BOXOFFICE_SIGNING_KEY"}, Edit: fn("src/pricing/fees.js", "minimumFee"), Remedies: []Remedy{env}},
		{ID: "t04", Scope: []string{"src/refunds"}, Hazard: "lint",
			Edit:     Edit{Append: map[string]string{"src/refunds/index.js": "\nexport function refundAmount(ticket) {\n  var amount = ticket.face;\n  return amount;\n}\n"}},
			Remedies: []Remedy{lint("src/refunds/index.js", "  var amount = ticket.face;\n", "  const amount = ticket.face;\n")}},
		{ID: "t05", Scope: []string{"db", "src/events"}, Hazard: "schema",
			Edit:     Edit{Replace: []Replacement{{"db/schema.sql", "  starts_at TIMESTAMP NOT NULL\n", "  starts_at TIMESTAMP NOT NULL,\n  doors_at TIMESTAMP\n"}}},
			Remedies: []Remedy{migration("db/migrations/003_events_doors.sql", "ALTER TABLE events ADD COLUMN doors_at TIMESTAMP;\n")}},
		{ID: "t06", Scope: []string{"src/mail"}, Edit: Edit{Append: map[string]string{"src/mail/templates.js": "\nexport function cancellationEmail(name, event) {\n  return `Subject: ${event} is cancelled\\n\\nHi ${name},\\n\\nwe are sorry: ${event} is cancelled and your order is refunded.\\n`;\n}\n"}}},
		{ID: "t07", Scope: []string{"src/pricing"}, Hazard: "sig", Edit: feeEdit, Remedies: []Remedy{feeFix}},
		{ID: "t08", Scope: []string{"src/waitlist"}, Hazard: "port", Busy: []string{"http"}, Edit: fn("src/waitlist/index.js", "waitlistBatch"), Remedies: []Remedy{port}},
		{ID: "t09", Scope: []string{"src/events"}, Hazard: "service", Down: []string{"service-redis"}, Edit: fn("src/events/index.js", "maxEventsPerDay"), Remedies: []Remedy{redis}},
		{ID: "t10", Scope: []string{"src/receipts", "test"}, Hazard: "golden", Edit: receiptEdit, Remedies: []Remedy{receiptFix}},
		{ID: "t11", Scope: []string{"src/waitlist", "config"}, Hazard: "review", Edit: waitEdit, Remedies: []Remedy{waitFix}, Review: review},
		{ID: "t12", Scope: []string{"src/mail"}, Hazard: "flaky", Flaky: true, Edit: fn("src/mail/relay.js", "maxRecipients")},
		{ID: "t13", Scope: []string{"src/http"}, Edit: Edit{Append: map[string]string{"src/http/server.js": "\nexport function routeCount() {\n  return ROUTES.length;\n}\n"}}},
		{ID: "t14", Scope: []string{"src/tickets"}, Hazard: "env", Unset: []string{"BOXOFFICE_SIGNING_KEY"}, Edit: fn("src/tickets/render.js", "ticketWidth"), Remedies: []Remedy{env}},
		{ID: "t15", Scope: []string{"src/errors"}, Hazard: "gen", Edit: Edit{Append: map[string]string{"src/errors/codes.txt": "E_REFUND_CLOSED\n"}}, Remedies: []Remedy{regen}},
		{ID: "t16", Scope: []string{"src/checkout"}, Hazard: "lint",
			Edit:     Edit{Append: map[string]string{"src/checkout/index.js": "\nexport function quote(seats, face) {\n  const fee = serviceFee(face);\n  console.log('quote', seats.length, face, fee);\n  return (face + fee) * seats.length;\n}\n"}},
			Remedies: []Remedy{lint("src/checkout/index.js", "  console.log('quote', seats.length, face, fee);\n", "")}},
		{ID: "t17", Scope: []string{"db", "src/checkout"}, Edit: Edit{
			Replace: []Replacement{{"db/schema.sql", "  total_cents INTEGER NOT NULL\n", "  total_cents INTEGER NOT NULL,\n  fee_cents INTEGER NOT NULL DEFAULT 0\n"}},
			Write:   map[string]string{"db/migrations/004_orders_fee.sql": "ALTER TABLE orders ADD COLUMN fee_cents INTEGER NOT NULL DEFAULT 0;\n"}}},
		{ID: "t18", Scope: []string{"src/seats"}, Hazard: "sig", Edit: holdEdit, Remedies: []Remedy{holdFix}},
		{ID: "t19", Scope: []string{"src/refunds"}, Hazard: "service", Down: []string{"service-redis"}, Edit: fn("src/refunds/index.js", "refundFeeCents"), Remedies: []Remedy{redis}},
		{ID: "t20", Scope: []string{"src/mail"}, Hazard: "port", Busy: []string{"http"}, Edit: fn("src/mail/templates.js", "subjectLimit"), Remedies: []Remedy{port}},
		{ID: "t21", Scope: []string{"README.md"}, Edit: Edit{Replace: []Replacement{{"README.md", "- npm run lint and npm test before pushing.\n", "- npm run lint and npm test before pushing;\n- npm run golden only after a design review of the new output.\n"}}}},
		{ID: "t22", Scope: []string{"db", "src/refunds"}, Hazard: "schema",
			Edit:     Edit{Append: map[string]string{"db/schema.sql": "\nCREATE TABLE refunds (\n  id TEXT PRIMARY KEY,\n  ticket_id TEXT NOT NULL REFERENCES tickets (id),\n  amount_cents INTEGER NOT NULL\n);\n"}},
			Remedies: []Remedy{migration("db/migrations/005_refunds.sql", "CREATE TABLE refunds (\n  id TEXT PRIMARY KEY,\n  ticket_id TEXT NOT NULL REFERENCES tickets (id),\n  amount_cents INTEGER NOT NULL\n);\n")}},
		{ID: "t23", Scope: []string{"src/tickets", "test"}, Hazard: "golden", Edit: ticketEdit, Remedies: []Remedy{ticketFix}},
		{ID: "t24", Scope: []string{"src/venues"}, Edit: Edit{Append: map[string]string{"src/venues/venues.txt": "north-stage\n"}, Run: []string{"node scripts/codegen.js"}}},
		{ID: "t25", Scope: []string{"src/refunds", "config"}, Hazard: "review", Edit: refundEdit, Remedies: []Remedy{refundFix}, Review: review},
		{ID: "t26", Scope: []string{"src/waitlist"}, Hazard: "env", Unset: []string{"BOXOFFICE_SIGNING_KEY"}, Edit: fn("src/waitlist/index.js", "waitlistNotice"), Remedies: []Remedy{env}},
		{ID: "t27", Scope: []string{"src/pricing"}, Hazard: "lint",
			Edit:     Edit{Append: map[string]string{"src/pricing/fees.js": "\nexport function isComplimentary(face) {\n  return face == 0;\n}\n"}},
			Remedies: []Remedy{lint("src/pricing/fees.js", "  return face == 0;\n", "  return face === 0;\n")}},
		{ID: "t28", Scope: []string{"src/checkout"}, Hazard: "flaky", Flaky: true, Edit: fn("src/checkout/index.js", "checkoutTimeoutSeconds")},
		{ID: "t29", Scope: []string{"src/tickets"}, Hazard: "sig", Edit: issueEdit, Remedies: []Remedy{issueFix}},
		{ID: "t30", Scope: []string{"src/http"}, Hazard: "gen", Edit: Edit{Append: map[string]string{"src/http/routes.txt": "/refunds\n"}}, Remedies: []Remedy{regen}},
		{ID: "t31", Scope: []string{"src/mail"}, Hazard: "service", Down: []string{"service-redis"}, Edit: fn("src/mail/templates.js", "maxLineLength"), Remedies: []Remedy{redis}},
		{ID: "t32", Scope: []string{"test"}, Edit: Edit{Write: map[string]string{"test/waitlist.test.js": "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { joinWaitlist } from '../src/waitlist/index.js';\n\ntest('joining twice keeps one entry', () => {\n  assert.deepEqual(joinWaitlist(joinWaitlist([], 'a@example.com'), 'a@example.com'), ['a@example.com']);\n});\n"}}},
		{ID: "t33", Scope: []string{"src/events"}, Hazard: "port", Busy: []string{"http"}, Edit: fn("src/events/index.js", "eventSlugLength"), Remedies: []Remedy{port}},
		{ID: "t34", Scope: []string{"src/mail", "test"}, Hazard: "golden", Edit: reminderEdit, Remedies: []Remedy{reminderFix}},
		{ID: "t35", Scope: []string{"db", "src/tickets"}, Hazard: "schema",
			Edit:     Edit{Replace: []Replacement{{"db/schema.sql", "  seat TEXT NOT NULL\n", "  seat TEXT NOT NULL,\n  scanned_at TIMESTAMP\n"}}},
			Remedies: []Remedy{migration("db/migrations/006_tickets_scanned.sql", "ALTER TABLE tickets ADD COLUMN scanned_at TIMESTAMP;\n")}},
		{ID: "t36", Scope: []string{"src/refunds"}, Edit: Edit{Replace: []Replacement{{"src/refunds/index.js", "  return now < showAt && !ticket.scanned;\n", "  return now < showAt && !ticket.scanned && !ticket.complimentary;\n"}}}},
		{ID: "t37", Scope: []string{"src/events"}, Hazard: "env", Unset: []string{"BOXOFFICE_SIGNING_KEY"}, Edit: fn("src/events/index.js", "defaultCapacity"), Remedies: []Remedy{env}},
		{ID: "t38", Scope: []string{"src/seats", "config"}, Hazard: "review", Edit: holdCapEdit, Remedies: []Remedy{holdCapFix}, Review: review},
		{ID: "t39", Scope: []string{"src/waitlist"}, Hazard: "lint",
			Edit:     Edit{Append: map[string]string{"src/waitlist/index.js": "\nexport function position(list, email) {\n  var i = list.indexOf(email);\n  return i + 1;\n}\n"}},
			Remedies: []Remedy{lint("src/waitlist/index.js", "  var i = list.indexOf(email);\n", "  const i = list.indexOf(email);\n")}},
		{ID: "t40", Scope: []string{"src/venues"}, Hazard: "flaky", Flaky: true, Edit: fn("src/venues/index.js", "venueCount")},
		{ID: "t41", Scope: []string{"src/pricing"}, Hazard: "sig", Edit: priceEdit, Remedies: []Remedy{priceFix}},
		{ID: "t42", Scope: []string{"src/errors"}, Edit: Edit{Append: map[string]string{"src/errors/index.js": "\nexport function isAppError(err) {\n  return err instanceof AppError;\n}\n"}}},
		{ID: "t43", Scope: []string{"src/venues"}, Hazard: "gen", Edit: Edit{Append: map[string]string{"src/venues/venues.txt": "summer-park\n"}}, Remedies: []Remedy{regen}},
		{ID: "t44", Scope: []string{"src/checkout"}, Hazard: "service", Down: []string{"service-redis"}, Edit: fn("src/checkout/index.js", "maxSeatsShown"), Remedies: []Remedy{redis}},
		{ID: "t45", Scope: []string{"src/receipts"}, Edit: fn("src/receipts/render.js", "receiptCopies")},
		{ID: "t46", Scope: []string{"src/tickets"}, Hazard: "port", Busy: []string{"http"}, Edit: fn("src/tickets/render.js", "qrSize"), Remedies: []Remedy{port}},
		{ID: "t47", Scope: []string{"src/http"}, Edit: Edit{Append: map[string]string{"src/http/routes.txt": "/waitlist\n"}, Run: []string{"node scripts/codegen.js"}}},
		{ID: "t48", Scope: []string{"src/seats"}, Edit: fn("src/seats/lock.js", "lockTtlSeconds")},
	}
	return tr
}
