package httpapi

import (
	"context"
	"fmt"
	"net/http"

	"github.com/oapi-codegen/nullable"

	"creativeapi/internal/creative"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/jsontext"
	"creativeapi/internal/requestctx"
)

// command runs cmd, the effect of a command that takes an Idempotency-Key,
// for the request's caller under the key (when sent), with what admit read
// of the request (handOn): its operation, its fingerprint and the session
// lookup's read of the key. The answer is the first execution's or the
// stored one replayed, the latter only as the operation's replay rule
// (replayRules) says: to a caller mayReplay allows, mayReplay's error
// being the answer, already a Problem. A handler whose operation has no
// rule, or that passes no mayReplay where its rule asks for one, is not
// run (an error, so a 500 in every test that sends it). Every command goes
// through here: no handler reads the gate's values itself.
func (s *Server) command(ctx context.Context, key *string, mayReplay func(ctx context.Context) error, cmd idempotency.Command) (rawJSON, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	k := ""
	if key != nil {
		k = *key
	}
	in := gatedFrom(ctx)
	if err := checkReplayRule(in.operation, mayReplay != nil); err != nil {
		return rawJSON{}, err
	}
	resp, replayed, err := s.idem.Run(ctx, idempotency.Request{UserID: caller.PrincipalID(), Key: k,
		Fingerprint: in.fingerprint, Prefetched: in.prefetched, MayReplay: mayReplay}, cmd)
	if err != nil {
		return rawJSON{}, err
	}
	return rawJSON{resp, replayed}, nil
}

// replayRule is how a stored success of a keyed command is replayed
// (docs/idempotency.md, "Replays"): the one rule every keyed command
// decides replay through.
type replayRule int

const (
	// replayWhileAllowed: only to a caller the command itself would
	// still not refuse for who they are (a member whose role may run it,
	// an operator), checked by the handler's mayReplay before the stored
	// answer is used.
	replayWhileAllowed replayRule = iota + 1
	// replayToOwner: the answer is about the caller's own account (their
	// balance and deposits), which no change of role or membership takes
	// from them: replayed to the same user with no further check.
	replayToOwner
)

// replayRules names the replay rule of every operation that takes an
// Idempotency-Key; New refuses a spec with a keyed operation missing
// here, and command refuses a handler that passes no check where its
// rule asks for one.
var replayRules = map[string]replayRule{
	"addCreativeVersion":            replayWhileAllowed,
	"claimAccountDeposit":           replayToOwner,
	"completeUpload":                replayWhileAllowed,
	"createAccountDeposit":          replayToOwner,
	"createCreative":                replayWhileAllowed,
	"createCreativeComment":         replayWhileAllowed,
	"createPlatformWebhookEndpoint": replayWhileAllowed,
	"createShare":                   replayWhileAllowed,
	"createUpload":                  replayWhileAllowed,
	"createWebhookEndpoint":         replayWhileAllowed,
	"executeCreativeAction":         replayWhileAllowed,
	"putCreativeReviewPlan":         replayWhileAllowed,
	"settleOperatorTransfer":        replayWhileAllowed,
	"topUpAccountDeposit":           replayToOwner,
	// A guest's: only while their share (never widened) still lets them.
	"createGuestCreativeComment": replayWhileAllowed,
	"executeGuestCreativeAction": replayWhileAllowed,
}

// checkReplayRules fails when the keyed operations of the spec and
// replayRules differ.
func checkReplayRules(keyed []string) error {
	seen := make(map[string]bool, len(keyed))
	for _, op := range keyed {
		seen[op] = true
		if _, ok := replayRules[op]; !ok {
			return fmt.Errorf("httpapi: operation %s takes an Idempotency-Key but has no replay rule (replayRules)", op)
		}
	}
	for op := range replayRules {
		if !seen[op] {
			return fmt.Errorf("httpapi: replayRules names %s, which takes no Idempotency-Key in the spec", op)
		}
	}
	return nil
}

// checkReplayRule fails for a handler of operation that runs a command
// against its rule: none, or no replay check where the rule asks for one.
func checkReplayRule(operation string, checks bool) error {
	switch rule, ok := replayRules[operation]; {
	case !ok:
		return fmt.Errorf("httpapi: operation %q runs a keyed command but has no replay rule", operation)
	case rule == replayWhileAllowed && !checks:
		return fmt.Errorf("httpapi: operation %s replays only while the caller is allowed, and its handler passes no check", operation)
	case rule == replayToOwner && checks:
		return fmt.Errorf("httpapi: operation %s replays to its owner, and its handler passes a check the rule does not name", operation)
	}
	return nil
}

// rawJSON is an answer whose body is JSON already, the one response writer
// besides the generated ones. It writes a command's answer exactly as
// stored, so a first answer and its replays are the same bytes, and the
// creatives creative.Detail encodes (see there for the measured reason
// they do not go through the generated types, and
// TestCreativeEncodingIsTheGeneratedOneByteForByte for the proof that the
// bytes are the same).
type rawJSON struct {
	idempotency.Response
	replayed bool
}

// detailBytes is room for one encoded creative, about a kilobyte with its
// versions: a page's buffer is sized from it, once.
const detailBytes = 1536

// creativeOK is a creative as a 200 answer, ending in a newline as the
// generated responses' json.Encoder writes it.
func creativeOK(d *creative.Detail) rawJSON {
	b := append(d.AppendJSON(make([]byte, 0, detailBytes)), '\n')
	return rawJSON{Response: idempotency.Response{Status: http.StatusOK, Body: b}}
}

// creativePageOK is a page of creatives (the CreativeList schema) as a 200
// answer; a null next writes a null nextCursor.
func creativePageOK(items []creative.Creative, next nullable.Nullable[string]) rawJSON {
	b := append(make([]byte, 0, 64+detailBytes*len(items)), `{"items":[`...)
	for i := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = items[i].Detail.AppendJSON(b)
	}
	b = append(b, `],"nextCursor":`...)
	if cursor, err := next.Get(); err == nil {
		b = jsontext.AppendString(b, cursor)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, "}\n"...)
	return rawJSON{Response: idempotency.Response{Status: http.StatusOK, Body: b}}
}

func (r rawJSON) write(w http.ResponseWriter) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if r.Location != "" {
		h.Set("Location", r.Location)
	}
	if r.replayed {
		h.Set("Idempotent-Replayed", "true")
	}
	w.WriteHeader(r.Status)
	_, err := w.Write(r.Body)
	return err
}

func (r rawJSON) VisitExecuteCreativeActionResponse(w http.ResponseWriter) error { return r.write(w) }
func (r rawJSON) VisitCreateAccountDepositResponse(w http.ResponseWriter) error  { return r.write(w) }
func (r rawJSON) VisitCreateCreativeResponse(w http.ResponseWriter) error        { return r.write(w) }
func (r rawJSON) VisitAddCreativeVersionResponse(w http.ResponseWriter) error    { return r.write(w) }
func (r rawJSON) VisitCreateWebhookEndpointResponse(w http.ResponseWriter) error { return r.write(w) }
func (r rawJSON) VisitGetCreativeResponse(w http.ResponseWriter) error           { return r.write(w) }
func (r rawJSON) VisitListCreativesResponse(w http.ResponseWriter) error         { return r.write(w) }
func (r rawJSON) VisitUpdateCreativeResponse(w http.ResponseWriter) error        { return r.write(w) }
func (r rawJSON) VisitPutCreativeReviewPlanResponse(w http.ResponseWriter) error { return r.write(w) }
func (r rawJSON) VisitDeleteCreativeReviewPlanResponse(w http.ResponseWriter) error {
	return r.write(w)
}
func (r rawJSON) VisitCreateCreativeCommentResponse(w http.ResponseWriter) error { return r.write(w) }
func (r rawJSON) VisitCreateShareResponse(w http.ResponseWriter) error           { return r.write(w) }
func (r rawJSON) VisitClaimAccountDepositResponse(w http.ResponseWriter) error   { return r.write(w) }
func (r rawJSON) VisitListGuestCreativesResponse(w http.ResponseWriter) error    { return r.write(w) }
func (r rawJSON) VisitGetGuestCreativeResponse(w http.ResponseWriter) error      { return r.write(w) }
func (r rawJSON) VisitCreateGuestCreativeCommentResponse(w http.ResponseWriter) error {
	return r.write(w)
}
func (r rawJSON) VisitExecuteGuestCreativeActionResponse(w http.ResponseWriter) error {
	return r.write(w)
}
