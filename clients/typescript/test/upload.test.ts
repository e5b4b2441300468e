// uploadFile against the real server and its real S3-compatible store
// (internal/e2e starts both): a file of three parts goes straight to the
// store, one part fails once and is sent again after the client reads
// which parts the store holds, and the server's check of the stored file
// agrees with the SHA-256 the client computed in chunks.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash, getRandomValues } from "node:crypto";
import { createApiClient, type UploadedAsset } from "../src/client.js";
import { cookieFetch } from "./cookie-fetch.js";

const baseUrl = process.env["API_BASE_URL"];
if (!baseUrl) throw new Error("API_BASE_URL is not set: run this test through `go test ./internal/e2e`");

test("a file goes to the store in parts, a failed part is resumed, and the server checks what arrived", async () => {
  const api = createApiClient({ baseUrl, fetch: cookieFetch() });
  const session = await api.signIn({ email: "author@acme.test", password: "demo-password-1" });
  const org = session.memberships.find((m) => m.organization.name === "Acme Ads");
  assert.ok(org, "the author is a member of Acme Ads");

  // An HTML5 bundle (a zip's signature, then random bytes) of 12 MiB and a
  // bit: with 8 MiB parts, two parts.
  const size = 12 * 2 ** 20 + 12345;
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i += 65536) getRandomValues(bytes.subarray(i, Math.min(size, i + 65536)));
  bytes.set([0x50, 0x4b, 0x03, 0x04]);
  const file = new File([bytes], "bundle.zip", { type: "application/zip" });

  // The store's connection drops once, on part 2.
  const realFetch = globalThis.fetch;
  let dropped = 0;
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
    if (init?.method === "PUT" && String(input).includes("partNumber=2") && dropped === 0) {
      dropped++;
      throw new TypeError("fetch failed: the connection was reset");
    }
    return realFetch(input, init);
  };
  const progress: number[] = [];
  let asset: UploadedAsset;
  try {
    asset = await api.uploadFile(org.organization.id, file, { onProgress: (sent) => progress.push(sent) });
  } finally {
    globalThis.fetch = realFetch;
  }
  assert.equal(dropped, 1);
  assert.equal(asset.sizeBytes, size);
  assert.equal(asset.sha256, createHash("sha256").update(bytes).digest("hex"));
  assert.equal(asset.mimeType, "application/zip");
  assert.equal(progress.at(-1), size);
  // Progress moves as the bytes go, at least every 256 KiB, and never back.
  progress.forEach((sent, i) => {
    const before = i === 0 ? 0 : progress[i - 1]!;
    assert.ok(sent >= before && sent - before <= 256 << 10, `progress step ${before} → ${sent}`);
  });
  assert.match(asset.url, /\/assets\/[0-9a-f-]+\/content$/);
  assert.match(asset.uploadId, /^[0-9a-f-]{36}$/); // what a version takes as { uploadId }

  // A file of one part is PUT whole with the headers its part names (the
  // SHA-256 the store checks against the bytes).
  const small = new File([bytes.subarray(0, 4096)], "small.zip", { type: "application/zip" });
  const one = await api.uploadFile(org.organization.id, small);
  assert.equal(one.sizeBytes, 4096);
  assert.equal(one.sha256, createHash("sha256").update(bytes.subarray(0, 4096)).digest("hex"));

  // Aborted before it starts: nothing is created.
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(api.uploadFile(org.organization.id, file, { signal: controller.signal }), { name: "AbortError" });

  // Aborted while its parts go out: the pending upload is deleted, so it
  // no longer holds one of the caller's 20 pending places.
  const midway = new AbortController();
  const deletes: number[] = [];
  const passThrough = globalThis.fetch;
  globalThis.fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const request = input instanceof Request ? input : undefined;
    const response = await passThrough(input, init);
    if ((request?.method ?? init?.method) === "DELETE") deletes.push(response.status);
    return response;
  };
  try {
    await assert.rejects(
      api.uploadFile(org.organization.id, file, { signal: midway.signal, onProgress: (sent) => sent > 0 && midway.abort() }),
      { name: "AbortError" },
    );
  } finally {
    globalThis.fetch = passThrough;
  }
  assert.deepEqual(deletes, [204]);
});

test("uploadFile returns the Asset a version shows and a comment anchors to, under one id", async () => {
  const api = createApiClient({ baseUrl, fetch: cookieFetch() });
  const session = await api.signIn({ email: "author@acme.test", password: "demo-password-1" });
  const org = session.memberships.find((m) => m.organization.name === "Acme Ads")!.organization.id;
  const bytes = new Uint8Array(2048);
  getRandomValues(bytes);
  bytes.set([0x50, 0x4b, 0x03, 0x04]);
  const asset = await api.uploadFile(org, new File([bytes], "one-id.zip", { type: "application/zip" }));

  const draft = await api.createCreative(org, { title: "One id", type: "html5", aspectRatio: "1:1", geo: "DE", language: "de-DE" });
  const creative = await api.addCreativeVersion(org, draft.id, { assets: [{ uploadId: asset.uploadId }] });
  assert.deepEqual(creative.currentVersion?.assets[0], asset);
  assert.ok(asset.url.endsWith(`/assets/${asset.id}/content`), asset.url);
  const comment = await api.createCreativeComment(org, draft.id, { body: "The bundle", anchor: { assetId: asset.id } });
  assert.equal(comment.anchor?.assetId, asset.id);
});
