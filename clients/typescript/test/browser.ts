// What the client tests that drive people through a story share: the
// server's address, whether Prism's validating proxy stands in front of it,
// and a browser stand-in per signed-in person.
//
// API_BASE_URL: the server (or Prism in front of it). PRISM=1: any
// `sl-violations` header or Prism error answer fails the run.
import { createApiClient } from "../src/client.js";

const baseUrl = process.env["API_BASE_URL"];
if (!baseUrl) throw new Error("API_BASE_URL is not set: run this test through `go test ./internal/e2e`");
export const throughPrism = process.env["PRISM"] === "1";

/** A browser stand-in for one signed-in person: a cookie jar, and Prism's verdicts. */
export function browser(violations: string[]) {
  const cookies = new Map<string, string>();
  const fetchFn = async (request: Request): Promise<Response> => {
    const headers = new Headers(request.headers);
    if (cookies.size > 0) headers.set("Cookie", [...cookies].map(([n, v]) => `${n}=${v}`).join("; "));
    const body = request.body ? await request.arrayBuffer() : undefined;
    const response = await fetch(request.url, { method: request.method, headers, body, redirect: "manual" });
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(";", 1)[0] ?? "";
      const eq = pair.indexOf("=");
      cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim());
    }
    const verdict = response.headers.get("sl-violations");
    if (verdict !== null) violations.push(`${request.method} ${new URL(request.url).pathname} → ${response.status}: ${verdict}`);
    if (!response.ok && (await response.clone().text()).includes("stoplight.io/prism/errors")) {
      violations.push(`${request.method} ${new URL(request.url).pathname}: Prism refused the request`);
    }
    return response;
  };
  return createApiClient({ baseUrl: baseUrl!, fetch: fetchFn });
}
