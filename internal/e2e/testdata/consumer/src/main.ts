// Runs app.ts under node against API_BASE_URL and checks what it did. Node
// has no cookie jar, so this fetch keeps the session cookie as a browser
// would, and it records each command's Idempotency-Key and whether the
// answer was a replay. Prints "consumer: ok" and a summary, or throws.
import { run } from "./app.js";

declare const process: { env: Record<string, string | undefined> };

const baseUrl = process.env["API_BASE_URL"];
if (!baseUrl) throw new Error("API_BASE_URL is not set: run this through `go test ./internal/e2e`");

interface Sent {
  method: string;
  path: string;
  status: number;
  idempotencyKey: string | null;
  replayed: boolean;
}
const sent: Sent[] = [];
const cookies = new Map<string, string>();

async function browserFetch(request: Request): Promise<Response> {
  const headers = new Headers(request.headers);
  if (cookies.size > 0) headers.set("Cookie", [...cookies].map(([k, v]) => `${k}=${v}`).join("; "));
  const body = request.body ? await request.arrayBuffer() : null;
  const response = await fetch(request.url, { method: request.method, headers, body, redirect: "manual" });
  for (const line of response.headers.getSetCookie()) {
    const pair = line.split(";", 1)[0] ?? "";
    const eq = pair.indexOf("=");
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (value === "" || /;\s*max-age=0/i.test(line)) cookies.delete(name);
    else cookies.set(name, value);
  }
  sent.push({
    method: request.method,
    path: new URL(request.url).pathname,
    status: response.status,
    idempotencyKey: request.headers.get("Idempotency-Key"),
    replayed: response.headers.get("Idempotent-Replayed") === "true",
  });
  return response;
}

function check(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Error(`consumer: ${what}\nrequests: ${JSON.stringify(sent, null, 1)}`);
}

const out = await run({ baseUrl, fetch: browserFetch });

check(out.submitted.reviewStatus === "in_review", `submit moves the draft to in_review, got ${out.submitted.reviewStatus}`);
check(out.submitted.version === out.draft.version + 1, "submit adds one version");
check(JSON.stringify(out.resubmitted) === JSON.stringify(out.submitted), "the repeated submit answers the same creative");
const actions = sent.filter((s) => s.method === "POST" && s.path.endsWith("/actions"));
check(actions.length === 2, `two action requests, got ${actions.length}`);
check(actions.every((s) => s.idempotencyKey === out.actionKey), "both carry the chosen Idempotency-Key");
check(actions.map((s) => s.replayed).join() === "false,true", "the second is a replay of the first");

check(out.deposit.status === "awaiting_transfer", `a new deposit awaits its transfer, got ${out.deposit.status}`);
const requested = BigInt(out.deposit.requestedAmount.amountMinor);
check(requested > 25000000n && requested < 25010000n, `the requested amount carries a matching suffix: ${requested}`);
const deposits = sent.filter((s) => s.method === "POST" && s.path === "/api/v1/me/balance/deposits");
check(deposits[0]?.idempotencyKey === out.depositKey && deposits[0].status === 201, "the deposit is created with the chosen key");
check(
  out.tooSmall.status === 422 && out.tooSmall.code === "invalid_request" &&
    out.tooSmall.fieldErrors.some((f) => f.field === "amount.amountMinor" && f.code === "out_of_range"),
  `a deposit below the minimum is a typed 422: ${JSON.stringify(out.tooSmall)}`,
);

console.log(`consumer: ok (${sent.length} requests; submitted creative ${out.submitted.id}, deposit ${out.deposit.id})`);
