package httpapi

import (
	"context"
	"net/http"

	"github.com/oapi-codegen/nullable"

	"creativeapi/gen/db"
	"creativeapi/internal/creative"
	"creativeapi/internal/idempotency"
	"creativeapi/internal/jsontext"
	"creativeapi/internal/requestctx"
)

// command runs cmd, the effect of a command that takes an Idempotency-Key,
// for the request's caller under the key (when sent), with what admit read
// of the request (handOn): its fingerprint and the session lookup's read of
// the key. The answer is the first execution's or the stored one replayed,
// the latter only to a caller mayReplay (nil: any) allows; mayReplay's
// error is the answer, already a Problem. Every command goes through here:
// no handler reads the gate's values itself.
func (s *Server) command(ctx context.Context, key *string, mayReplay func(ctx context.Context, q *db.Queries) error, cmd idempotency.Command) (rawJSON, error) {
	caller, _ := requestctx.CallerFrom(ctx)
	k := ""
	if key != nil {
		k = *key
	}
	in := gatedFrom(ctx)
	resp, replayed, err := s.idem.Run(ctx, idempotency.Request{UserID: caller.UserID, Key: k,
		Fingerprint: in.fingerprint, Prefetched: in.prefetched, MayReplay: mayReplay}, cmd)
	if err != nil {
		return rawJSON{}, err
	}
	return rawJSON{resp, replayed}, nil
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
func (r rawJSON) VisitCreateCreativeCommentResponse(w http.ResponseWriter) error { return r.write(w) }
func (r rawJSON) VisitClaimAccountDepositResponse(w http.ResponseWriter) error   { return r.write(w) }
