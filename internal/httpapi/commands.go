package httpapi

import (
	"net/http"

	"creativeapi/internal/idempotency"
)

// commandResponse writes a command's answer exactly as stored, so a first
// answer and its replays are the same bytes.
type commandResponse struct {
	idempotency.Response
	replayed bool
}

func (r commandResponse) write(w http.ResponseWriter) error {
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

func (r commandResponse) VisitExecuteCreativeActionResponse(w http.ResponseWriter) error {
	return r.write(w)
}

func (r commandResponse) VisitCreateAccountDepositResponse(w http.ResponseWriter) error {
	return r.write(w)
}

func (r commandResponse) VisitCreateCreativeResponse(w http.ResponseWriter) error {
	return r.write(w)
}

func (r commandResponse) VisitAddCreativeVersionResponse(w http.ResponseWriter) error {
	return r.write(w)
}

func (r commandResponse) VisitCreateWebhookEndpointResponse(w http.ResponseWriter) error {
	return r.write(w)
}
