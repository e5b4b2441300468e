package seed

import (
	"context"
	"log/slog"

	"creativeapi/internal/store"
)

// Placeholder: replaced by the demo users and organizations.
func seedPeople(ctx context.Context, s *store.Store, log *slog.Logger) (People, error) {
	return People{}, nil
}
