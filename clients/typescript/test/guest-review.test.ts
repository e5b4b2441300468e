// Guest review as a client outside the workspace drives it, with the real
// client wrapper against a real server on seeded demo data (internal/e2e
// runs it with the other client tests): an admin shares a creative in
// review with `decide` and invites the guest, the guest opens the link, sees it with their
// actions, comments on a region, requests changes; the author sees the
// guest's comment and decision, named as a guest, and an internal comment
// of the members never reaches the guest.
//
// API_BASE_URL: the server (or Prism in front of it). PRISM=1: any
// `sl-violations` header or Prism error answer fails the run.
// MAILPIT_URL: the inbox the server sends to; the guest reads the code
// that verifies their session there (only a verified session decides).
import { test } from "node:test";
import assert from "node:assert/strict";
import { ApiProblem, type CreativeDetail } from "../src/client.js";
import { browser, throughPrism } from "./browser.js";

const mailpitUrl = process.env["MAILPIT_URL"];
if (!mailpitUrl) throw new Error("MAILPIT_URL is not set: run this test through `go test ./internal/e2e`");

/** The code of the newest code email to `to`, waiting for it to arrive. */
async function mailedCode(to: string): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const query = encodeURIComponent(`to:"${to}"`);
    const list = (await (await fetch(`${mailpitUrl}/api/v1/search?limit=10&query=${query}`)).json()) as { messages: { ID: string }[] };
    for (const m of list.messages ?? []) {
      const message = (await (await fetch(`${mailpitUrl}/api/v1/message/${m.ID}`)).json()) as { Text: string };
      const code = /Your code is ([0-9]{6})\./.exec(message.Text)?.[1];
      if (code) return code;
    }
    if (Date.now() > deadline) throw new Error(`no code email to ${to}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

test("a guest comments on a shared creative and requests changes", async (t) => {
  const violations: string[] = [];
  const author = browser(violations);
  const admin = browser(violations);
  const guest = browser(violations);
  let org = "";
  let creative: CreativeDetail | undefined;
  let token = "";
  // An address of this run's own: Mailpit is shared by the runs.
  const email = `legal-${crypto.randomUUID().slice(0, 8)}@brand.test`;

  await t.test("the author submits a creative; the admin shares it with decide", async () => {
    const session = await author.signIn({ email: "author@acme.test", password: "demo-password-1" });
    org = session.memberships.find((m) => m.organization.name === "Acme Ads")!.organization.id;
    await admin.signIn({ email: "admin@acme.test", password: "demo-password-1" });
    const created = await author.createCreative(org, {
      title: `Guest story ${Date.now()}`,
      type: "static",
      aspectRatio: "9:16",
      geo: "DE",
      language: "de-DE",
    });
    await author.addCreativeVersion(org, created.id, {
      assets: [
        {
          fileName: "guest-v1.png",
          mimeType: "image/png",
          sizeBytes: 482133,
          sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
          url: "https://cdn.acme.test/uploads/guest-v1.png",
          width: 1080,
          height: 1920,
        },
      ],
    });
    creative = await author.executeCreativeAction(org, created.id, { action: "submit" });
    await admin.createCreativeComment(org, created.id, { body: "Between us: watch the budget.", visibility: "internal" });
    const { data, response } = await admin.raw.POST("/api/v1/organizations/{organizationId}/shares", {
      params: { path: { organizationId: org }, header: { "Idempotency-Key": crypto.randomUUID() } },
      // A decide share is an admin's, and only the emails it invites decide.
      body: { creativeIds: [created.id], permission: "decide", invite: [{ email, name: "Brand Legal" }] },
    });
    assert.equal(response.status, 201);
    token = data!.token!;
  });

  await t.test("the guest opens the link and sees the creative with their actions", async () => {
    const session = await guest.guest.signIn(token, { name: "Brand Legal", email });
    assert.equal(session.share.permission, "decide");
    assert.equal(session.guest.verified, false, "a typed email is not proven");
    // The typed email answers the mailed code: the session is verified.
    await guest.guest.requestVerification();
    const verified = await guest.guest.confirmVerification(await mailedCode(email));
    assert.equal(verified.guest.verified, true);
    const page = await guest.guest.listCreatives();
    assert.deepEqual(
      page.items.map((c) => c.id),
      [creative!.id],
    );
    assert.deepEqual(page.items[0]!.availableActions, ["request_changes", "approve"]);
    assert.equal(page.items[0]!.openCommentCount, 0, "the members' internal comment is not counted");
    // A guest session is no member's: the organization's paths are closed
    // (Prism refuses the call itself: the guest cookie is no scheme there).
    if (!throughPrism) {
      const err = await guest.getCreative(org, creative!.id).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof ApiProblem && err.status === 401);
    }
  });

  await t.test("the guest comments on a region and requests changes", async () => {
    const shown = await guest.guest.getCreative(creative!.id);
    const asset = shown.currentVersion!.assets[0]!;
    const remark = await guest.guest.comment(creative!.id, {
      body: "The claim needs its footnote.",
      anchor: { assetId: asset.id, region: { x: 0.1, y: 0.8, width: 0.5, height: 0.1 } },
    });
    assert.equal(remark.author.kind, "guest");
    assert.equal(remark.visibility, "everyone");
    assert.deepEqual(
      (await guest.guest.listComments(creative!.id)).items.map((c) => c.id),
      [remark.id],
      "the guest sees their comment and no internal one",
    );
    const decided = await guest.guest.decide(creative!.id, { action: "request_changes", comment: "Footnote first." });
    assert.equal(decided.reviewStatus, "changes_requested");
  });

  await t.test("the author sees the guest's comment and decision", async () => {
    const comments = await author.listCreativeComments(org, creative!.id);
    const byGuest = comments.items.find((c) => c.author.kind === "guest");
    assert.equal(byGuest?.author.name, "Brand Legal");
    const history = await author.listCreativeEvents(org, creative!.id);
    assert.equal(history.items[0]!.type, "request_changes");
    assert.equal(history.items[0]!.actor.kind, "guest");
    assert.equal((await author.getCreative(org, creative!.id)).reviewStatus, "changes_requested");
  });

  if (throughPrism) {
    await t.test("Prism saw no violation", () => {
      console.log(`prism-violations: ${violations.length} of the guest review`);
      assert.deepEqual(violations, [], "every request and response matches openapi.yaml");
    });
  }
});
