package httpapi

import (
	"encoding/json"
	"net/http"

	"creativeapi/internal/idempotency"
)

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

// encodeOK is v as a 200 answer, ending in a newline as the generated
// responses' json.Encoder writes it.
func encodeOK(v any) (rawJSON, error) {
	b, err := json.Marshal(v)
	return rawJSON{Response: idempotency.Response{Status: http.StatusOK, Body: append(b, '\n')}}, err
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
