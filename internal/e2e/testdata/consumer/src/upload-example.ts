// The upload example of docs/frontend.md, kept here so the consumer test
// type-checks it against the installed package; it is compiled, never run.
declare const input: HTMLInputElement;
declare const org: string;
declare function showProgress(percent: number): void;
import { createApiClient } from "@creativeapi/client";

const api = createApiClient({ baseUrl: "http://localhost:8080" });
const controller = new AbortController(); // controller.abort() cancels the upload
const asset = await api.uploadFile(org, input.files![0]!, {
  onProgress: (sent, total) => showProgress((100 * sent) / total),
  signal: controller.signal,
}); // asset.url: the file's download path on the API, for members only
