// Package seed loads the demo data README.md describes. Every step is
// re-runnable: it finds what exists and adds only what is missing.
package seed

import (
	"context"
	"log/slog"

	"github.com/google/uuid"

	"creativeapi/internal/store"
)

// DemoPassword is every demo user's password.
const DemoPassword = "demo-password-1"

// Options tune the demo data.
type Options struct {
	// Creatives adds this many extra draft creatives to Acme (benchmarks).
	Creatives int
}

// Run loads the demo data.
func Run(ctx context.Context, s *store.Store, log *slog.Logger, opts Options) error {
	// First: a database holding the demo users is a development one, and
	// every command without DEV_MODE refuses it.
	if err := s.Q.DevelopmentDatabaseMark(ctx); err != nil {
		return err
	}
	people, err := seedPeople(ctx, s, log)
	if err != nil {
		return err
	}
	return seedCreatives(ctx, s, log, people, opts)
}

// People are the ids of the demo organizations and users, for the steps
// that seed what belongs to them.
type People struct {
	Acme, Globex uuid.UUID
	// Users maps a demo email (admin@acme.test, …) to its user id.
	Users map[string]uuid.UUID
}
