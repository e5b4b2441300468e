// Package objectstore is the API's side of the S3-compatible object store
// that holds uploaded files. The API never carries a file's bytes on the
// way in: it presigns part uploads for the browser, asks the store which
// parts arrived, assembles them, reads the object once to check it, and
// presigns short-lived downloads. Signing is aws-sdk-go-v2's (SigV4).
package objectstore

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/encoding/httpbinding"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Config locates the store and the bucket.
type Config struct {
	// Endpoint is where the API reaches the store; empty means AWS S3.
	Endpoint string
	// PublicEndpoint is the store as browsers reach it, used in presigned
	// URLs; empty means Endpoint.
	PublicEndpoint  string
	Bucket          string
	Region          string
	AccessKeyID     string
	SecretAccessKey string
}

// Store talks to one bucket.
type Store struct {
	bucket string
	client *s3.Client
	// The presigned URLs are signed by the SDK's SigV4 signer directly
	// over a request built from public, the bucket's URL as browsers reach
	// it: the presign client's middleware stack cost about 0.1 ms and 375
	// allocations per URL, and an upload presigns one per part
	// (docs/performance.md, ablation row G). The signer keeps the day's
	// derived signing key.
	public *url.URL
	signer *v4.Signer
	creds  aws.Credentials
	region string
}

// ErrNotFound is the store's answer for a missing object or upload.
var ErrNotFound = errors.New("objectstore: not found")

// ErrUnavailable is a store that did not answer (refused, unreachable, cut
// off, past the deadline) or answered that it is failing (a 5xx): the
// caller may retry later. The original error stays in the chain for logs.
// It is the store's own, never the database's: the HTTP layer answers it
// 503 storage_unavailable (docs/errors.md).
var ErrUnavailable = errors.New("object store unavailable")

// fail names op in err, and marks err ErrUnavailable unless the store
// answered it with a refusal of its own (a 4xx: a request of ours it
// will not serve, which retrying does not change).
func fail(op string, err error) error {
	var resp *smithyhttp.ResponseError
	// A request that never got an answer has a response error of status 0.
	if errors.As(err, &resp) && resp.HTTPStatusCode() >= 400 && resp.HTTPStatusCode() < 500 {
		return fmt.Errorf("%s: %w", op, err)
	}
	return fmt.Errorf("%s: %w: %w", op, ErrUnavailable, err)
}

// New builds the client; it makes no request.
func New(cfg Config) (*Store, error) {
	public := cfg.PublicEndpoint
	if public == "" {
		public = cfg.Endpoint
	}
	publicURL, err := bucketURL(cfg, public)
	if err != nil {
		return nil, err
	}
	client := newClient(cfg, cfg.Endpoint)
	return &Store{
		bucket: cfg.Bucket, client: client, public: publicURL,
		signer: v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true }),
		creds:  aws.Credentials{AccessKeyID: cfg.AccessKeyID, SecretAccessKey: cfg.SecretAccessKey, Source: "objectstore"},
		region: cfg.Region,
	}, nil
}

// bucketURL is the bucket's URL under endpoint by the SDK's endpoint rules
// (path-style under an endpoint, the bucket's own host on AWS S3), as its
// client and its presigner name it.
func bucketURL(cfg Config, endpoint string) (*url.URL, error) {
	ep, err := s3.NewDefaultEndpointResolverV2().ResolveEndpoint(context.Background(), s3.EndpointParameters{
		Bucket: &cfg.Bucket, Region: &cfg.Region, Endpoint: nonEmpty(endpoint), ForcePathStyle: aws.Bool(endpoint != ""),
	})
	if err != nil {
		return nil, fmt.Errorf("the URL of bucket %s: %w", cfg.Bucket, err)
	}
	return &ep.URI, nil
}

func newClient(cfg Config, endpoint string) *s3.Client {
	return s3.New(s3.Options{
		Region:      cfg.Region,
		Credentials: credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, ""),
		// A checksum header the SDK would add by default has no place in a
		// URL a browser PUTs to, and not every S3-compatible store knows it.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		BaseEndpoint:               nonEmpty(endpoint),
		// Path-style addressing works on every S3-compatible store; a
		// bucket name in the host needs wildcard DNS.
		UsePathStyle: endpoint != "",
	})
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Bucket is the bucket's name.
func (s *Store) Bucket() string { return s.bucket }

// EnsureBucket creates the bucket when missing and lets browsers from
// origins PUT parts and read their ETag (the client needs it to resume).
func (s *Store) EnsureBucket(ctx context.Context, origins []string) error {
	_, err := s.client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &s.bucket})
	if err != nil && !hasCode(err, "BucketAlreadyOwnedByYou", "BucketAlreadyExists") {
		return fmt.Errorf("create bucket %s: %w", s.bucket, err)
	}
	if len(origins) == 0 {
		return nil
	}
	_, err = s.client.PutBucketCors(ctx, &s3.PutBucketCorsInput{
		Bucket: &s.bucket,
		CORSConfiguration: &types.CORSConfiguration{CORSRules: []types.CORSRule{{
			AllowedOrigins: origins,
			AllowedMethods: []string{"PUT", "GET", "HEAD"},
			AllowedHeaders: []string{"*"},
			ExposeHeaders:  []string{"ETag"},
			MaxAgeSeconds:  aws.Int32(3600),
		}}},
	})
	if err != nil {
		return fmt.Errorf("set the CORS rules of bucket %s: %w", s.bucket, err)
	}
	return nil
}

// Ping checks that the bucket answers.
func (s *Store) Ping(ctx context.Context) error {
	_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.bucket})
	return err
}

// CreateMultipartUpload starts a multipart upload of key, stored as
// contentType, and returns the store's upload id. The SDK does not retry
// it: a retried start would leave a second upload behind, and the caller
// retries under its own Idempotency-Key. (A hand-signed POST ?uploads used
// to stand here: about 0.05 ms less CPU on a several-part createUpload of
// 1.65 to 2.2 ms, under the 5% a speed mechanism must buy; docs/performance.md,
// ablation row F.)
func (s *Store) CreateMultipartUpload(ctx context.Context, key, contentType string) (string, error) {
	out, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket: &s.bucket, Key: &key, ContentType: &contentType,
	}, func(o *s3.Options) { o.Retryer = aws.NopRetryer{} })
	if err != nil {
		return "", fail("create multipart upload", err)
	}
	if out.UploadId == nil || *out.UploadId == "" {
		return "", errors.New("create multipart upload: no upload id in the answer")
	}
	return *out.UploadId, nil
}

// PresignPut returns the URL a browser PUTs a whole object of length bytes
// to (a file of one part: no multipart upload), and the headers the PUT
// must carry. The URL is scoped to that one write: Content-Length is
// signed, so the store refuses a body of another length, and with a
// non-empty sha256 (hex) so is x-amz-checksum-sha256, so the store refuses
// other bytes (BadDigest) and whatever the URL writes is the file
// announced. If-None-Match: * is signed too, so the URL only creates the
// object: once Seal put a marker at key, the store refuses it (412), which
// is how a URL that nothing can revoke is refused all the same.
func (s *Store) PresignPut(ctx context.Context, key string, length int64, sha256 string, ttl time.Duration) (string, http.Header, error) {
	h := http.Header{IfNoneMatchHeader: {"*"}}
	if sha256 != "" {
		sum, err := hex.DecodeString(sha256)
		if err != nil {
			return "", nil, fmt.Errorf("presign put: sha256: %w", err)
		}
		h.Set(ChecksumSHA256Header, base64.StdEncoding.EncodeToString(sum))
	}
	u, err := s.presign(ctx, http.MethodPut, key, url.Values{}, length, h, ttl)
	if err != nil {
		return "", nil, fmt.Errorf("presign put: %w", err)
	}
	return u, h, nil
}

// ChecksumSHA256Header is the header carrying a body's SHA-256 (base64)
// that the store checks the body against.
const ChecksumSHA256Header = "X-Amz-Checksum-Sha256"

// IfNoneMatchHeader, signed as "*" into a PresignPut URL, makes its PUT
// create the object or nothing.
const IfNoneMatchHeader = "If-None-Match"

// Seal writes an empty object at key, replacing whatever is there: a
// PresignPut URL of key (which only creates) is refused from then on, until
// the marker is deleted. A multipart upload needs no seal: its part URLs
// die with it (AbortMultipartUpload, CompleteMultipartUpload).
func (s *Store) Seal(ctx context.Context, key string) error {
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: strings.NewReader(""), ContentLength: aws.Int64(0)})
	if err != nil {
		return fail("seal object", err)
	}
	return nil
}

// PresignUploadPart returns the URL a browser PUTs part number, of length
// bytes, to; Content-Length is signed, so the store refuses another length.
func (s *Store) PresignUploadPart(ctx context.Context, key, uploadID string, number int32, length int64, ttl time.Duration) (string, error) {
	u, err := s.presign(ctx, http.MethodPut, key, url.Values{"partNumber": {strconv.Itoa(int(number))}, "uploadId": {uploadID}}, length, nil, ttl)
	if err != nil {
		return "", fmt.Errorf("presign part %d: %w", number, err)
	}
	return u, nil
}

// presign signs method on key with query for ttl (SigV4 in the query, an
// unsigned payload), as the SDK's S3 presigner does. The signed headers
// are the host, Content-Length when length > 0, and header (which the
// request must then carry as they are).
func (s *Store) presign(ctx context.Context, method, key string, query url.Values, length int64, header http.Header, ttl time.Duration) (string, error) {
	u := objectURL(s.public, key)
	query.Set("X-Amz-Expires", strconv.FormatInt(int64(ttl/time.Second), 10))
	u.RawQuery = query.Encode()
	if header == nil {
		header = http.Header{}
	}
	req := &http.Request{Method: method, URL: &u, Host: u.Host, Header: header.Clone(), ContentLength: length}
	signed, _, err := s.signer.PresignHTTP(ctx, s.creds, req, "UNSIGNED-PAYLOAD", "s3", s.region, time.Now())
	return signed, err
}

// objectURL is key's URL in the bucket at bucket, its path escaped as S3
// signs it.
func objectURL(bucket *url.URL, key string) url.URL {
	u := *bucket
	u.RawPath = strings.TrimSuffix(bucket.EscapedPath(), "/") + "/" + httpbinding.EscapePath(key, false)
	u.Path = strings.TrimSuffix(u.Path, "/") + "/" + key
	if u.RawPath == u.Path {
		u.RawPath = ""
	}
	return u
}

// Part is a part the store holds.
type Part struct {
	Number int32
	Size   int64
	ETag   string
	// LastModified is when the store received it.
	LastModified time.Time
}

// ListParts lists the parts of a multipart upload that arrived, by number.
func (s *Store) ListParts(ctx context.Context, key, uploadID string) ([]Part, error) {
	var parts []Part
	p := s3.NewListPartsPaginator(s.client, &s3.ListPartsInput{Bucket: &s.bucket, Key: &key, UploadId: &uploadID})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			if hasCode(err, "NoSuchUpload", "NoSuchKey") {
				return nil, ErrNotFound
			}
			return nil, fail("list parts", err)
		}
		for _, pt := range page.Parts {
			parts = append(parts, Part{Number: aws.ToInt32(pt.PartNumber), Size: aws.ToInt64(pt.Size), ETag: aws.ToString(pt.ETag),
				LastModified: aws.ToTime(pt.LastModified)})
		}
	}
	return parts, nil
}

// CompleteMultipartUpload assembles parts (in number order) into key.
func (s *Store) CompleteMultipartUpload(ctx context.Context, key, uploadID string, parts []Part) error {
	done := make([]types.CompletedPart, len(parts))
	for i, p := range parts {
		done[i] = types.CompletedPart{PartNumber: aws.Int32(p.Number), ETag: aws.String(p.ETag)}
	}
	_, err := s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &s.bucket, Key: &key, UploadId: &uploadID,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done},
	})
	if err != nil {
		if hasCode(err, "NoSuchUpload") {
			return ErrNotFound
		}
		return fail("complete multipart upload", err)
	}
	return nil
}

// AbortMultipartUpload drops an unfinished upload and its parts; an upload
// already gone is not an error.
func (s *Store) AbortMultipartUpload(ctx context.Context, key, uploadID string) error {
	_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &key, UploadId: &uploadID})
	if err != nil && !hasCode(err, "NoSuchUpload", "NoSuchKey") {
		return fail("abort multipart upload", err)
	}
	return nil
}

// Open streams the object.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		if hasCode(err, "NoSuchKey", "NotFound") {
			return nil, 0, ErrNotFound
		}
		return nil, 0, fail("get object", err)
	}
	return out.Body, aws.ToInt64(out.ContentLength), nil
}

// MaxCopyBytes is the largest object Copy copies: S3's limit for one
// CopyObject (larger objects need UploadPartCopy, which config's bound on
// UPLOAD_MAX_BYTES spares us).
const MaxCopyBytes = 5 << 30

// Copy copies the object at src to dst inside the bucket, in the store
// (no byte passes through the API), metadata included.
func (s *Store) Copy(ctx context.Context, src, dst string) error {
	source := s.bucket + "/" + httpbinding.EscapePath(src, false)
	_, err := s.client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &s.bucket, Key: &dst, CopySource: &source})
	if err != nil {
		if hasCode(err, "NoSuchKey", "NotFound") {
			return ErrNotFound
		}
		return fail("copy object", err)
	}
	return nil
}

// Delete removes the object; a missing object is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil && !hasCode(err, "NoSuchKey", "NotFound") {
		return fail("delete object", err)
	}
	return nil
}

// Exists reports whether the object is there.
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	_, ok, err := s.Stat(ctx, key)
	return ok, err
}

// Size is the size of the object at key, and whether there is one.
func (s *Store) Size(ctx context.Context, key string) (int64, bool, error) {
	o, ok, err := s.Stat(ctx, key)
	return o.Size, ok, err
}

// Object is what the store says of an object it holds.
type Object struct {
	Size         int64
	LastModified time.Time
}

// Stat is the size and time of the object at key, and whether there is one.
func (s *Store) Stat(ctx context.Context, key string) (Object, bool, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		if hasCode(err, "NoSuchKey", "NotFound") {
			return Object{}, false, nil
		}
		return Object{}, false, fail("head object", err)
	}
	return Object{Size: aws.ToInt64(out.ContentLength), LastModified: aws.ToTime(out.LastModified)}, true, nil
}

// PresignGet returns a URL that downloads the object for ttl, named
// fileName when saved and served as contentType, whatever type the PUT
// that stored it declared.
func (s *Store) PresignGet(ctx context.Context, key, fileName, contentType string, ttl time.Duration) (string, error) {
	disposition := "attachment; filename*=UTF-8''" + strings.ReplaceAll(url.PathEscape(fileName), "'", "%27")
	u, err := s.presign(ctx, http.MethodGet, key, url.Values{
		"response-content-disposition": {disposition}, "response-content-type": {contentType},
	}, 0, nil, ttl)
	if err != nil {
		return "", fmt.Errorf("presign get: %w", err)
	}
	return u, nil
}

// hasCode reports whether err is an S3 error with one of codes.
func hasCode(err error, codes ...string) bool {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	for _, c := range codes {
		if apiErr.ErrorCode() == c {
			return true
		}
	}
	return false
}

// Ready checks that the store answers a request signed with our
// credentials (listing buckets needs no bucket).
func (s *Store) Ready(ctx context.Context) error {
	_, err := s.client.ListBuckets(ctx, &s3.ListBucketsInput{})
	return err
}
