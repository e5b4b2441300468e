// An approval record checked in Node with the client's verifyApproval,
// which uses Web Crypto's Ed25519, an implementation independent of the
// server's go-jose: the seeded approved creative's record verifies against
// /.well-known/jwks.json, and one changed byte of the record fails.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createApiClient, verifyApproval } from "../src/client.js";
import { cookieFetch } from "./cookie-fetch.js";

const baseUrl = process.env["API_BASE_URL"];
if (!baseUrl) throw new Error("API_BASE_URL is not set: run this test through `go test ./internal/e2e`");

test("an approval record verifies with Web Crypto against the published keys", async () => {
  const api = createApiClient({ baseUrl, fetch: cookieFetch() });
  const session = await api.signIn({ email: "viewer@acme.test", password: "demo-password-1" });
  const org = session.memberships.find((m) => m.organization.name === "Acme Ads")!.organization.id;
  const approved = (await api.listCreatives(org, { limit: 100 })).items.find((c) => c.approvedVersion !== null);
  assert.ok(approved, "the demo data has an approved creative");

  const { record, jws } = await api.getCreativeApproval(org, approved.id);
  const keys = await createApiClient({ baseUrl }).getApprovalKeys(); // no session needed
  const verified = await verifyApproval(jws, keys);
  assert.deepEqual(verified, record);
  assert.equal(verified.versionNumber, approved.approvedVersion?.number);

  const [header, payload, signature] = jws.split(".");
  const text = Buffer.from(payload!, "base64url").toString("utf8");
  const changed = text.replace(/"title":"(.)/, (_, c: string) => `"title":"${c === "X" ? "Y" : "X"}`);
  assert.notEqual(changed, text);
  const forged = `${header}.${Buffer.from(changed, "utf8").toString("base64url")}.${signature}`;
  await assert.rejects(verifyApproval(forged, keys), /does not verify/);
});
