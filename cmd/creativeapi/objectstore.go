package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"creativeapi/internal/config"
	"creativeapi/internal/objectstore"
	"creativeapi/internal/s3server"
)

// openObjectStore connects to the S3_* store or, in development mode when
// S3_ENDPOINT is unset, starts the private store under DATA_DIR/s3. It
// returns nil (uploads answer 503) when uploads are not configured, or in
// development mode when the store's executable is not built. close stops
// whatever it started.
func openObjectStore(ctx context.Context, cfg config.Config, log *slog.Logger) (store *objectstore.Store, line string, close func(), err error) {
	if !cfg.UploadsEnabled() {
		log.Warn("S3_BUCKET is not set: upload requests answer 503")
		return nil, "", func() {}, nil
	}
	if !cfg.PrivateS3() {
		store, err := objectstore.New(objectstore.Config{
			Endpoint: cfg.S3Endpoint, PublicEndpoint: cfg.S3PublicEndpoint, Bucket: cfg.S3Bucket, Region: cfg.S3Region,
			AccessKeyID: cfg.S3AccessKeyID, SecretAccessKey: cfg.S3SecretAccessKey,
		})
		return store, "", func() {}, err
	}
	if _, err := os.Stat(cfg.S3ServerBin); errors.Is(err, os.ErrNotExist) {
		log.Warn("the private S3 store is not built: upload requests answer 503 (run make s3-server, or make run)", "S3_SERVER_BIN", cfg.S3ServerBin)
		return nil, "", func() {}, nil
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, "", nil, err
	}
	s3Log, err := os.OpenFile(filepath.Join(cfg.DataDir, "s3.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, "", nil, fmt.Errorf("open the S3 store's log: %w", err)
	}
	origins := append([]string{cfg.PublicBaseURL}, cfg.AllowedOrigins...)
	srv, err := s3server.Start(ctx, s3server.Options{
		Bin: cfg.S3ServerBin, DataDir: filepath.Join(cfg.DataDir, "s3"), Bucket: cfg.S3Bucket, Region: cfg.S3Region,
		AllowedOrigins: origins, Log: s3Log, Addr: cfg.S3DevAddr,
	})
	if err != nil {
		s3Log.Close()
		return nil, "", nil, fmt.Errorf("start the private S3 store: %w", err)
	}
	log.Info("private S3 store started", "endpoint", srv.Endpoint, "bucket", cfg.S3Bucket, "log", s3Log.Name())
	line = fmt.Sprintf("  Store %s (S3, bucket %s, data %s)\n", srv.Endpoint, cfg.S3Bucket, filepath.Join(cfg.DataDir, "s3"))
	if store, err = objectstore.New(srv.Config); err != nil {
		_ = srv.Stop()
		s3Log.Close()
		return nil, "", nil, err
	}
	return store, line, func() { _ = srv.Stop(); s3Log.Close() }, nil
}
