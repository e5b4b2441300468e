package httpapi_test

import (
	"context"
	"io"
	"log/slog"

	"creativeapi/internal/idempotency"
	"creativeapi/internal/testenv"
)

func idempotencyPurge(env *testenv.Env) error {
	return idempotency.Purge(context.Background(), env.DB.Store, slog.New(slog.NewTextHandler(io.Discard, nil)))
}
