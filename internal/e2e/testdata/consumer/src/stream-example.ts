// The live stream example of the package's README, kept here so the
// consumer test type-checks it against the installed package; it is
// compiled, never run.
declare function showProgress(confirmations: number, required: number): void;
declare function markApproved(creativeId: string): void;
declare function goToSignIn(): void;
import { openEventStream } from "@creativeapi/client";

const stream = openEventStream({
  baseUrl: "http://localhost:8080",
  lastEventId: sessionStorage.getItem("lastEventId") ?? undefined, // resume where the last page stopped
  onEvent: (event) => {
    sessionStorage.setItem("lastEventId", event.id);
    switch (event.type) {
      case "deposit.confirming": showProgress(event.data.confirmations, event.data.confirmationsRequired); break; // data: AccountDeposit
      case "creative.approved": markApproved(event.data.id); break; // data: CreativeSnapshot
    }
  },
  onClosed: () => goToSignIn(), // the session ended
});
