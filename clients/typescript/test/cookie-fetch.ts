// A fetch that keeps the session cookie, as a browser does (node has no
// cookie jar), for the tests that sign in through the client.
export function cookieFetch(): (request: Request) => Promise<Response> {
  let cookie: string | undefined;
  return async (request: Request): Promise<Response> => {
    const headers = new Headers(request.headers);
    if (cookie) headers.set("Cookie", cookie);
    const response = await fetch(new Request(request, { headers }));
    const set = response.headers.get("Set-Cookie");
    if (set) cookie = set.split(";")[0];
    return response;
  };
}
