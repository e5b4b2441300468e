package seed

import (
	"context"
	"log/slog"

	"creativeapi/internal/store"
)

// Placeholder: replaced by the demo creatives.
func seedCreatives(ctx context.Context, s *store.Store, log *slog.Logger, p People, opts Options) error {
	return nil
}
