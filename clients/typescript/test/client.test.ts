// The frontend's path through the API, with the real client wrapper against
// a real server on seeded demo data (internal/e2e starts both and runs this
// file with node's test runner):
// sign in → list creatives → submit a draft → availableActions change →
// create a deposit, lose its response, retry with the same Idempotency-Key →
// the same deposit → pay a deposit on the chain simulator, see it credited → a 422 read through the typed ApiProblem → sign out.
//
// API_BASE_URL: the server (or Prism's validating proxy in front of it).
// PRISM=1: the base URL is Prism; any `sl-violations` header or Prism error
// answer fails the run, and the count is printed as "prism-violations: N".
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ApiProblem,
  createApiClient,
  type AccountDeposit,
  type CreatedAccessToken,
  type CreateAccountDepositRequest,
  type CreativeDetail,
  type FieldError,
  type Problem,
  openEventStream,
  type StreamEvent,
} from "../src/client.js";
import { nodeEventSource } from "./event-source.js";

const baseUrl = process.env["API_BASE_URL"];
if (!baseUrl) throw new Error("API_BASE_URL is not set: run this test through `go test ./internal/e2e`");
// DEVCHAIN_URL: the chain simulator the server's chain watcher reads.
const chainUrl = process.env["DEVCHAIN_URL"];
if (!chainUrl) throw new Error("DEVCHAIN_URL is not set: run this test through `go test ./internal/e2e`");
const throughPrism = process.env["PRISM"] === "1";

type CreativeAction = CreativeDetail["availableActions"][number];

/** One request the client sent and what came back. */
interface Exchange {
  method: string;
  path: string;
  status: number;
  idempotencyKey: string | null;
  replayed: boolean;
  /** Prism's `sl-violations` header, or its own error answer (request refused by Prism). */
  violation: string | null;
}

/**
 * A fetch that behaves like the browser's for our purposes (node has no
 * cookie jar), records every exchange, and can lose one response after the
 * server answered, as a dropped connection would.
 */
function testFetch() {
  const cookies = new Map<string, string>();
  const exchanges: Exchange[] = [];
  let loseResponse: ((request: Request) => boolean) | undefined;

  const fetchFn = async (request: Request): Promise<Response> => {
    const headers = new Headers(request.headers);
    if (cookies.size > 0) {
      headers.set("Cookie", [...cookies].map(([name, value]) => `${name}=${value}`).join("; "));
    }
    const body = request.body ? await request.arrayBuffer() : undefined;
    const response = await fetch(request.url, { method: request.method, headers, body, redirect: "manual" });

    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(";", 1)[0] ?? "";
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (value === "" || /;\s*max-age=0/i.test(line)) cookies.delete(name);
      else cookies.set(name, value);
    }

    let violation = response.headers.get("sl-violations");
    if (violation === null && !response.ok) {
      const text = await response.clone().text();
      if (text.includes("stoplight.io/prism/errors")) violation = text;
    }
    exchanges.push({
      method: request.method,
      path: new URL(request.url).pathname,
      status: response.status,
      idempotencyKey: request.headers.get("Idempotency-Key"),
      replayed: response.headers.get("Idempotent-Replayed") === "true",
      violation,
    });

    if (loseResponse?.(request)) {
      loseResponse = undefined;
      await response.arrayBuffer();
      throw new TypeError("fetch failed: the test dropped the connection after the server answered");
    }
    return response;
  };

  return {
    fetch: fetchFn,
    exchanges,
    cookies,
    /** The next response to a request matching `match` is lost after the server answered it. */
    loseNextResponse(match: (request: Request) => boolean) {
      loseResponse = match;
    },
  };
}

/** The data of a raw call that must succeed (2xx). */
async function unwrapOk<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  assert.ok(response.ok && data !== undefined, `${response.status}: ${JSON.stringify(error)}`);
  return data;
}

/** Calls fn, which must throw an ApiProblem, and returns it. */
async function problemOf(fn: () => Promise<unknown>): Promise<ApiProblem> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ApiProblem) return err;
    throw err;
  }
  assert.fail("expected an ApiProblem, the call succeeded");
}

const usdt = (amountMinor: string): CreateAccountDepositRequest => ({
  amount: { amountMinor, currency: "USDT", scale: 6 },
});

test("a frontend signs in, reviews a creative, deposits and reads errors", async (t) => {
  const net = testFetch();
  const api = createApiClient({ baseUrl, fetch: net.fetch });
  let acmeId = "";
  let draft: CreativeDetail | undefined;

  await t.test("sign in as the author", async () => {
    const session = await api.signIn({ email: "author@acme.test", password: "demo-password-1" });
    assert.equal(session.user.email, "author@acme.test");
    assert.ok(session.csrfToken.length > 0, "the session carries a CSRF token");
    const acme = session.memberships.find((m) => m.organization.name === "Acme Ads");
    assert.ok(acme, `author@acme.test is a member of Acme Ads: ${JSON.stringify(session.memberships)}`);
    acmeId = acme.organization.id;
    assert.equal((await api.getMe()).user.id, session.user.id, "the session cookie is kept");
  });

  await t.test("personal access tokens come a page at a time", async () => {
    const made: CreatedAccessToken[] = [];
    for (const name of ["CI one", "CI two", "CI three"]) {
      made.push(await api.createAccessToken({ name, scopes: ["creatives:read"] }));
    }
    const first = await api.listAccessTokens({ limit: 2 });
    assert.equal(first.items.length, 2);
    assert.ok(first.nextCursor, "a first page of 2 of 3 tokens has a next one");
    const rest = await api.listAccessTokens({ limit: 2, cursor: first.nextCursor });
    const ids = [...first.items, ...rest.items].map((tk) => tk.id);
    for (const tk of made) assert.ok(ids.includes(tk.id), `token ${tk.name} is listed once across the pages`);
    assert.equal(new Set(ids).size, ids.length, "no token on two pages");
    for (const tk of made) await api.revokeAccessToken(tk.id);
    assert.equal((await api.listAccessTokens()).items.filter((tk) => made.some((m) => m.id === tk.id)).length, 0);
  });

  await t.test("a backend calls with a token, within its scope", async () => {
    const made = await api.createAccessToken({ name: "client test", scopes: ["creatives:read"] });
    assert.match(made.token, /^cat_[0-9A-Za-z]{49}$/);
    const backend = createApiClient({ baseUrl, token: made.token });
    const page = await backend.listCreatives(acmeId, { limit: 1 });
    assert.equal(page.items.length, 1, "the token reads as its user");
    const refused = await problemOf(() => backend.createAccountDeposit(usdt("25000000")));
    assert.equal(refused.code, "insufficient_scope");
    await api.revokeAccessToken(made.id);
    assert.equal((await problemOf(() => backend.listCreatives(acmeId))).code, "invalid_token");
  });

  // The operations whose security listed the cookie only though they have
  // an x-scope (issue 67): a token with the scope calls them, and under
  // PRISM=1 Prism's validating proxy sees these calls too.
  await t.test("a token sets and removes a review plan and cancels a deposit", async () => {
    const made = await api.createAccessToken({
      name: "client test writer",
      scopes: ["creatives:read", "creatives:write", "deposits:write"],
    });
    const backend = createApiClient({ baseUrl, token: made.token });
    const reviewers = await backend.listOrganizationMembers(acmeId, { role: ["reviewer"] });
    const reviewer = reviewers.items[0];
    assert.ok(reviewer, "Acme Ads has a reviewer");
    const created = await unwrapOk(
      backend.raw.POST("/api/v1/organizations/{organizationId}/creatives", {
        params: { path: { organizationId: acmeId }, header: { "Idempotency-Key": crypto.randomUUID() } },
        body: { title: "Token plan", type: "static", aspectRatio: "9:16", geo: "DE", language: "de-DE" },
      }),
    );
    const path = { organizationId: acmeId, creativeId: created.id };
    const planned = await unwrapOk(
      backend.raw.PUT("/api/v1/organizations/{organizationId}/creatives/{creativeId}/review-plan", {
        params: { path, header: { "Idempotency-Key": crypto.randomUUID() } },
        body: { stages: [{ name: "Brand", rule: "all", reviewerIds: [reviewer.user.id] }] },
      }),
    );
    assert.equal(planned.reviewPlan?.stages[0]?.name, "Brand");
    const removed = await unwrapOk(
      backend.raw.DELETE("/api/v1/organizations/{organizationId}/creatives/{creativeId}/review-plan", { params: { path } }),
    );
    assert.equal(removed.reviewPlan, null);
    const deposit = await backend.createAccountDeposit(usdt("21000000"));
    const cancelled = await unwrapOk(
      backend.raw.POST("/api/v1/me/balance/deposits/{depositId}/cancel", { params: { path: { depositId: deposit.id } } }),
    );
    assert.equal(cancelled.status, "cancelled");
    await api.revokeAccessToken(made.id);
  });

  await t.test("list creatives", async () => {
    const page = await api.listCreatives(acmeId, { limit: 100 });
    const states = new Set(page.items.map((c) => c.reviewStatus));
    for (const s of ["draft", "in_review", "changes_requested", "approved", "archived"] as const) {
      assert.ok(states.has(s), `the demo data has a ${s} creative (saw ${[...states].join(", ")})`);
    }
    const drafts = await api.listCreatives(acmeId, { reviewStatus: "draft" });
    assert.ok(drafts.items.every((c) => c.reviewStatus === "draft"), "the reviewStatus filter applies");
    draft = drafts.items.find((c) => c.currentVersion !== null && c.availableActions.includes("submit"));
    assert.ok(draft, "the author has a draft with a version to submit");
  });

  await t.test("submit the draft: availableActions change", async () => {
    assert.ok(draft);
    const before: CreativeAction[] = draft.availableActions;
    const submitted = await api.executeCreativeAction(acmeId, draft.id, {
      action: "submit",
      expectedVersion: draft.version,
    });
    assert.equal(submitted.reviewStatus, "in_review");
    assert.equal(submitted.version, draft.version + 1);
    assert.ok(before.includes("submit"));
    // The author may neither review their own creative nor archive it once
    // it left draft: nothing is left to offer.
    assert.deepEqual(submitted.availableActions, []);
    const reread = await api.getCreative(acmeId, draft.id);
    assert.deepEqual(reread.availableActions, submitted.availableActions);
    assert.equal(reread.version, submitted.version);

    const again = await problemOf(() =>
      api.executeCreativeAction(acmeId, draft!.id, { action: "submit", expectedVersion: draft!.version }),
    );
    assert.equal(again.status, 409);
    assert.equal(again.code, "version_conflict");
  });

  await t.test("create a deposit; its lost response is retried with the same key", async () => {
    const isDepositPost = (r: Request) => r.method === "POST" && r.url.endsWith("/api/v1/me/balance/deposits");
    net.loseNextResponse(isDepositPost);
    const first = net.exchanges.length;
    const deposit: AccountDeposit = await api.createAccountDeposit(usdt("25000000"));

    const posts = net.exchanges.slice(first).filter((e) => e.method === "POST");
    assert.equal(posts.length, 2, "one lost answer, one retry");
    const [lost, retry] = posts;
    assert.ok(lost && retry);
    assert.ok(lost.idempotencyKey, "the wrapper sends an Idempotency-Key");
    assert.equal(retry.idempotencyKey, lost.idempotencyKey, "the retry reuses the key");
    assert.deepEqual([lost.status, lost.replayed], [201, false]);
    assert.deepEqual([retry.status, retry.replayed], [201, true], "the retry is answered from the stored response");

    assert.equal(deposit.status, "awaiting_transfer");
    assert.equal(deposit.network, "TRC20");
    const requested = BigInt(deposit.requestedAmount.amountMinor);
    assert.ok(requested > 25000000n && requested < 25010000n, `matching suffix added: ${requested}`);

    const explicit = await api.createAccountDeposit(usdt("25000000"), { idempotencyKey: lost.idempotencyKey });
    assert.equal(explicit.id, deposit.id, "the same key and body give the same deposit");
    assert.deepEqual(explicit, deposit, "byte for byte the stored answer");

    const mine = await api.listAccountDeposits();
    assert.equal(mine.items.filter((d) => d.id === deposit.id).length, 1, "one deposit only");
    assert.equal((await api.getAccountDeposit(deposit.id)).requestedAmount.amountMinor, deposit.requestedAmount.amountMinor);
  });

  await t.test("pay a deposit on the chain: confirming, then credited, the balance up by exactly the requested amount", async () => {
    const before = BigInt((await api.getAccountBalance()).available.amountMinor);
    // The live stream hears the deposit move. From event 0 on, so opening
    // and paying cannot race; the deposit's own events are picked out.
    // (Prism's proxy cannot pass a stream on: only the direct run streams.)
    const streamed: StreamEvent[] = [];
    const stream = throughPrism
      ? undefined
      : openEventStream({
          baseUrl,
          lastEventId: "0",
          onEvent: (event) => streamed.push(event),
          EventSource: nodeEventSource(() => [...net.cookies].map(([name, value]) => `${name}=${value}`).join("; ")),
        });
    const deposit = await api.createAccountDeposit(usdt("30000000"));
    // A real payer sends USDT from a wallet; here the chain simulator pays.
    const paid = await fetch(`${chainUrl}/transfers`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ to: deposit.address, value: deposit.requestedAmount.amountMinor }),
    });
    assert.equal(paid.status, 201);
    const { transactionId } = (await paid.json()) as { transactionId: string };

    const seen = new Set<string>();
    let now: AccountDeposit = deposit;
    for (let i = 0; i < 200 && now.status !== "credited"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      now = await api.getAccountDeposit(deposit.id);
      seen.add(`${now.status} ${now.confirmations}/${now.confirmationsRequired}`);
    }
    assert.equal(now.status, "credited", `the deposit went through ${[...seen].join(", ")}`);
    assert.equal(now.transactionId, transactionId, "the deposit names the transaction that paid it");
    assert.deepEqual(now.creditedAmount, now.requestedAmount);
    assert.equal(now.confirmations, now.confirmationsRequired);
    const after = BigInt((await api.getAccountBalance()).available.amountMinor);
    assert.equal(after - before, BigInt(deposit.requestedAmount.amountMinor), "credited exactly once");

    if (stream) {
      const moves = () =>
        streamed.flatMap((event) => {
          // The union narrows on type: a deposit event's data is an AccountDeposit.
          if (!event.type.startsWith("deposit.")) return [];
          const moved: AccountDeposit = (event as Extract<StreamEvent, { type: `deposit.${string}` }>).data;
          return moved.id === deposit.id ? [`${event.type} ${moved.confirmations}`] : [];
        });
      for (let i = 0; i < 100 && !moves().some((m) => m.startsWith("deposit.credited")); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      stream.close();
      const heard = moves();
      assert.ok(heard[0]?.startsWith("deposit.confirming"), `the stream heard ${heard.join(", ")}`);
      assert.equal(heard.at(-1), `deposit.credited ${deposit.confirmationsRequired}`, `the stream heard ${heard.join(", ")}`);
      assert.ok(stream.lastEventId !== undefined && /^[0-9]+$/.test(stream.lastEventId), "the stream keeps the last id");
    }
  });

  await t.test("a 422 is read through the typed ApiProblem", async () => {
    const first = net.exchanges.length;
    // 0.01 USDT: whole cents, so it passes the schema (and Prism), but far
    // below the minimum deposit.
    const err = await problemOf(() => api.createAccountDeposit(usdt("10000")));
    const problem: Problem = err.problem;
    assert.equal(err.status, 422);
    assert.equal(problem.code, "invalid_request");
    assert.ok(problem.traceId.length > 0);
    const fieldErrors: FieldError[] = err.fieldErrors;
    const amount = fieldErrors.find((f) => f.field === "amount.amountMinor");
    assert.ok(amount, `fieldErrors name amount.amountMinor: ${JSON.stringify(fieldErrors)}`);
    const code: FieldError["code"] = amount.code; // a closed union, not any string
    assert.equal(code, "out_of_range");
    assert.ok(amount.message.length > 0);
    assert.equal(net.exchanges.length - first, 1, "a 4xx is final: no retry");
  });

  await t.test("sign out ends the session", async () => {
    const kept = new Map(net.cookies);
    await api.signOut();
    assert.equal(net.cookies.size, 0, "sign-out clears the session cookie");
    // The old cookie (a copy kept elsewhere) no longer works: the session
    // ended on the server, not only in the browser.
    for (const [name, value] of kept) net.cookies.set(name, value);
    const err = await problemOf(() => api.getMe());
    assert.equal(err.status, 401);
    assert.equal(err.code, "unauthenticated");
  });

  if (throughPrism) {
    await t.test("Prism saw no violation", () => {
      const violations = net.exchanges.filter((e) => e.violation !== null);
      console.log(`prism-violations: ${violations.length} of ${net.exchanges.length} exchanges`);
      assert.deepEqual(
        violations.map((e) => `${e.method} ${e.path} → ${e.status}: ${e.violation}`),
        [],
        "every request and response matches openapi.yaml",
      );
    });
  }
});
