// The client example of the READMEs (the repository's "For frontend teams"
// and the package's), kept here so the consumer test type-checks it against
// the installed package; it is compiled, never run.
import { ApiProblem, createApiClient } from "@creativeapi/client";

const api = createApiClient({ baseUrl: "http://localhost:8080" }); // or "" behind your dev server's /api proxy
const { memberships } = await api.signIn({ email: "author@acme.test", password: "demo-password-1" });
const org = memberships[0]!.organization.id;
const { items } = await api.listCreatives(org, { reviewStatus: "draft" });
const draft = items.find((c) => c.availableActions.includes("submit"))!;
await api.executeCreativeAction(org, draft.id, { action: "submit", expectedVersion: draft.version }); // Idempotency-Key and CSRF handled
try { await api.createAccountDeposit({ amount: { amountMinor: "10000", currency: "USDT", scale: 6 } }); }
catch (e) { if (e instanceof ApiProblem) console.log(e.code, e.fieldErrors); } // invalid_request [{ field: "amount.amountMinor", code: "out_of_range", … }]
