// The review loop a frontend builds, with the real client wrapper against a
// real server on seeded demo data (internal/e2e runs it next to
// client.test.ts, directly and through Prism's validating proxy):
// the author creates a creative, uploads a version and submits it; an admin
// assigns the reviewer; the reviewer requests changes with a comment; the
// author reads the comment in the history, uploads the next version and
// submits again; the reviewer approves.
//
// API_BASE_URL: the server (or Prism in front of it). PRISM=1: any
// `sl-violations` header or Prism error answer fails the run.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ApiProblem, type CreativeDetail, type CreativeEvent } from "../src/client.js";
import { browser, throughPrism } from "./browser.js";

const png = (fileName: string) => ({
  fileName,
  mimeType: "image/png" as const,
  sizeBytes: 482133,
  sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  url: `https://cdn.acme.test/uploads/${fileName}`,
  width: 1080,
  height: 1920,
});

test("author, admin and reviewer close the review loop", async (t) => {
  const violations: string[] = [];
  const author = browser(violations);
  const admin = browser(violations);
  const reviewer = browser(violations);
  let org = "";
  let creative: CreativeDetail | undefined;
  const title = `Loop story ${Date.now()}`;

  await t.test("everyone signs in", async () => {
    const session = await author.signIn({ email: "author@acme.test", password: "demo-password-1" });
    org = session.memberships.find((m) => m.organization.name === "Acme Ads")!.organization.id;
    await admin.signIn({ email: "admin@acme.test", password: "demo-password-1" });
    await reviewer.signIn({ email: "reviewer@acme.test", password: "demo-password-1" });
  });

  await t.test("the author creates a creative, with a typo, then fixes it", async () => {
    const key = crypto.randomUUID();
    const created = await author.createCreative(
      org,
      { title: title.replace("story", "stroy"), type: "static", aspectRatio: "9:16", geo: "DE", language: "de-DE" },
      { idempotencyKey: key },
    );
    assert.equal(created.reviewStatus, "draft");
    assert.equal(created.version, 1);
    assert.equal(created.currentVersion, null);
    assert.deepEqual(created.permissions, { addVersion: true, edit: true, assignReviewer: false });
    const again = await author.createCreative(
      org,
      { title: title.replace("story", "stroy"), type: "static", aspectRatio: "9:16", geo: "DE", language: "de-DE" },
      { idempotencyKey: key },
    );
    assert.equal(again.id, created.id, "the same key creates one creative");
    creative = await author.updateCreative(org, created.id, { expectedVersion: created.version, title });
    assert.equal(creative.title, title);
    assert.equal(creative.version, 2);
    const found = await author.listCreatives(org, { q: title.toUpperCase() });
    assert.deepEqual(
      found.items.map((c) => c.id),
      [created.id],
      "the title search ignores case",
    );
  });

  await t.test("the author uploads a version and submits", async () => {
    assert.ok(creative);
    creative = await author.addCreativeVersion(org, creative.id, {
      expectedVersion: creative.version,
      assets: [png("loop-v1.png")],
    });
    assert.equal(creative.currentVersion?.number, 1);
    assert.ok(creative.availableActions.includes("submit"));
    creative = await author.executeCreativeAction(org, creative.id, { action: "submit", expectedVersion: creative.version });
    assert.equal(creative.reviewStatus, "in_review");
    assert.equal(creative.permissions.addVersion, false, "no new version while in review");
  });

  await t.test("an admin assigns the reviewer", async () => {
    assert.ok(creative);
    const candidates = await admin.listOrganizationMembers(org, { role: ["reviewer", "admin"] });
    const rita = candidates.items.find((m) => m.user.name === "Rita Reviewer");
    assert.ok(rita, `a reviewer to assign: ${JSON.stringify(candidates.items)}`);
    const seen = await admin.getCreative(org, creative.id);
    assert.equal(seen.permissions.assignReviewer, true);
    creative = await admin.updateCreative(org, creative.id, { expectedVersion: seen.version, reviewerId: rita.user.id });
    assert.equal(creative.reviewer?.id, rita.user.id);
    const queue = await reviewer.listCreatives(org, { reviewerId: rita.user.id, reviewStatuses: ["in_review", "changes_requested"] });
    assert.ok(queue.items.some((c) => c.id === creative!.id), "the creative is in the reviewer's queue");
  });

  await t.test("the reviewer requests changes with a comment", async () => {
    assert.ok(creative);
    const seen = await reviewer.getCreative(org, creative.id);
    assert.ok(seen.availableActions.includes("request_changes"));
    const err = await reviewer.executeCreativeAction(org, creative.id, { action: "request_changes", expectedVersion: seen.version }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiProblem && err.code === "invalid_request", "request_changes needs a comment");
    creative = await reviewer.executeCreativeAction(org, creative.id, {
      action: "request_changes",
      expectedVersion: seen.version,
      comment: "The logo is cut off in the 9:16 frame.",
    });
    assert.equal(creative.reviewStatus, "changes_requested");
  });

  await t.test("the author reads why in the history, uploads the next version and submits", async () => {
    assert.ok(creative);
    const history = await author.listCreativeEvents(org, creative.id, { limit: 3 });
    const latest: CreativeEvent | undefined = history.items[0];
    assert.equal(latest?.type, "request_changes");
    assert.equal(latest?.comment, "The logo is cut off in the 9:16 frame.");
    assert.equal(latest?.actor.name, "Rita Reviewer");
    assert.ok(history.nextCursor, "the history has more pages");
    const rest = await author.listCreativeEvents(org, creative.id, { cursor: history.nextCursor, limit: 100 });
    assert.deepEqual(
      [...history.items, ...rest.items].map((e) => e.type),
      ["request_changes", "updated", "submit", "version_added", "updated", "created"],
    );
    const edit = [...history.items, ...rest.items].find((e) => e.type === "updated" && e.changes?.[0]?.field === "title");
    assert.deepEqual(edit?.changes, [{ field: "title", from: title.replace("story", "stroy"), to: title }]);

    const current = await author.getCreative(org, creative.id);
    creative = await author.addCreativeVersion(org, creative.id, {
      expectedVersion: current.version,
      assets: [png("loop-v2.png")],
    });
    assert.equal(creative.currentVersion?.number, 2);
    assert.equal(creative.reviewStatus, "changes_requested");
    creative = await author.executeCreativeAction(org, creative.id, { action: "submit", expectedVersion: creative.version });
    assert.equal(creative.reviewStatus, "in_review");
  });

  await t.test("the reviewer approves the second version", async () => {
    assert.ok(creative);
    const seen = await reviewer.getCreative(org, creative.id);
    creative = await reviewer.executeCreativeAction(org, creative.id, { action: "approve", expectedVersion: seen.version });
    assert.equal(creative.reviewStatus, "approved");
    assert.equal(creative.approvedVersion?.number, 2);
    assert.equal(creative.version, 9);
  });

  await t.test("a stale edit is told so", async () => {
    assert.ok(creative);
    const err = await author.updateCreative(org, creative.id, { expectedVersion: 1, title: "Too late" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof ApiProblem);
    assert.equal(err.status, 409);
    assert.equal(err.code, "version_conflict");
  });

  if (throughPrism) {
    await t.test("Prism saw no violation", () => {
      console.log(`prism-violations: ${violations.length} of the review loop`);
      assert.deepEqual(violations, [], "every request and response matches openapi.yaml");
    });
  }
});
