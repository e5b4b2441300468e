// The client's answers are its exported named types, also under the
// strictest settings a project may use (exactOptionalPropertyTypes,
// noUncheckedIndexedAccess, skipLibCheck off). The consumer test
// type-checks this file for a browser project (lib DOM) and for a
// Node-only one (tsconfig.node.json: lib ES2022 and @types/node).
import type {
  AccountDeposit,
  ApiClient,
  Comment,
  CommentList,
  CreativeDetail,
  EventSourceConstructor,
  StreamEvent,
  UploadedAsset,
} from "@creativeapi/client";

export async function firstComment(api: ApiClient, org: string, creative: string): Promise<Comment | undefined> {
  const list: CommentList = await api.listCreativeComments(org, creative);
  const first: Comment | undefined = list.items[0];
  const again: Comment[] = (await api.listCreativeComments(org, creative, { resolved: false })).items;
  return first ?? again[0];
}

export async function shapes(api: ApiClient, org: string, id: string, file: Blob): Promise<[CreativeDetail, AccountDeposit, UploadedAsset]> {
  const creative: CreativeDetail = await api.getCreative(org, id);
  const deposit: AccountDeposit = await api.getAccountDeposit(id);
  const asset: UploadedAsset = await api.uploadFile(org, file, { onProgress: (sent, total) => void [sent, total] });
  return [creative, deposit, asset];
}

export type Handler = (event: StreamEvent) => void;
export type Source = EventSourceConstructor;
