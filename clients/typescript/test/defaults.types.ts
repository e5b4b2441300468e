// Type tests, checked by `npm run client:test:typecheck` and never run: a
// request field the spec gives a `default` and does not require is optional
// in the client (openapi-typescript's `--default-non-nullable false`), so a
// body that leaves it out compiles, as the server takes it.
import type { components } from "../src/schema.js";

type Schemas = components["schemas"];

export const webhookWithoutEnabled: Schemas["CreateWebhookEndpointRequest"] = {
  url: "https://hooks.example.test/creativeapi",
  eventTypes: ["creative.approved"],
};

export const platformWebhookWithoutEnabled: Schemas["CreatePlatformWebhookEndpointRequest"] = {
  url: "https://hooks.example.test/deposits",
  eventTypes: ["deposit.*"],
};

// @ts-expect-error A required field without a default stays required.
export const webhookWithoutURL: Schemas["CreateWebhookEndpointRequest"] = { eventTypes: ["creative.approved"] };
