// A minimal EventSource for node 20 (which has none), over fetch: enough
// for openEventStream in the client test. It sends the test's session
// cookie (node's fetch keeps none) and does not reconnect.
import type { EventSourceConstructor, EventSourceLike, StreamMessage } from "../src/client.js";

export function nodeEventSource(cookie: () => string): EventSourceConstructor {
  return class NodeEventSource implements EventSourceLike {
    readyState = 0;
    onerror: ((event: Event) => void) | null = null;
    readonly #listeners = new Map<string, ((event: StreamMessage) => void)[]>();
    readonly #abort = new AbortController();

    constructor(url: string) {
      void this.#run(url);
    }

    addEventListener(type: string, listener: (event: StreamMessage) => void): void {
      this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
    }

    close(): void {
      this.readyState = 2;
      this.#abort.abort();
    }

    async #run(url: string): Promise<void> {
      try {
        const response = await fetch(url, {
          headers: { Accept: "text/event-stream", Cookie: cookie() },
          signal: this.#abort.signal,
        });
        if (response.status !== 200 || !response.body) {
          this.readyState = 2;
          this.onerror?.(new Event("error"));
          return;
        }
        this.readyState = 1;
        const decoder = new TextDecoder();
        let buffered = "";
        const reader = response.body.getReader();
        for (let read = await reader.read(); !read.done; read = await reader.read()) {
          buffered += decoder.decode(read.value, { stream: true });
          for (let end = buffered.indexOf("\n\n"); end >= 0; end = buffered.indexOf("\n\n")) {
            this.#dispatch(buffered.slice(0, end));
            buffered = buffered.slice(end + 2);
          }
        }
      } catch {
        // Closed by close().
      }
      this.readyState = 2;
    }

    #dispatch(block: string): void {
      let id = "";
      let type = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "id") id = value;
        else if (field === "event") type = value;
        else if (field === "data") data = value;
      }
      if (data === "") return;
      const event = { data, lastEventId: id } satisfies StreamMessage;
      for (const listener of this.#listeners.get(type) ?? []) listener(event);
    }
  };
}
