package objectstore_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"creativeapi/internal/objectstore"
)

// TestPresignedURLsNameTheBucketAsTheSDKsRulesDo: the URLs signed without
// the presign client keep its addressing (the bucket's own host on AWS S3,
// path-style under an endpoint, the public endpoint for browsers) and carry
// the part and the expiry that are signed. The real store's tests prove the
// signature (internal/s3server, internal/httpapi).
func TestPresignedURLsNameTheBucketAsTheSDKsRulesDo(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      objectstore.Config
		wantHost string
		wantPath string
	}{
		{"AWS S3", objectstore.Config{Bucket: "creatives", Region: "eu-west-1"},
			"creatives.s3.eu-west-1.amazonaws.com", "/uploads/a/b"},
		{"an endpoint", objectstore.Config{Endpoint: "http://127.0.0.1:9000", Bucket: "creatives", Region: "us-east-1"},
			"127.0.0.1:9000", "/creatives/uploads/a/b"},
		{"a public endpoint", objectstore.Config{Endpoint: "http://s3.internal:9000", PublicEndpoint: "https://files.example.com/s3", Bucket: "creatives", Region: "auto"},
			"files.example.com", "/s3/creatives/uploads/a/b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.AccessKeyID, tc.cfg.SecretAccessKey = "AKID", "SECRET"
			s, err := objectstore.New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := s.PresignUploadPart(context.Background(), "uploads/a/b", "up+1", 7, 1000, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			if u.Host != tc.wantHost || u.Path != tc.wantPath || q.Get("partNumber") != "7" || q.Get("uploadId") != "up+1" ||
				q.Get("X-Amz-Expires") != "3600" || q.Get("X-Amz-SignedHeaders") != "content-length;host" || len(q.Get("X-Amz-Signature")) != 64 {
				t.Fatalf("URL %s", raw)
			}
		})
	}
}
