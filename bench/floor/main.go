// Command floor is the benchmark's yardstick: the bare Go server a
// deposit, a review action, a replay, a creative read and a page of
// creatives cannot cost less than. It is net/http and a pgx pool sending
// the statements the pgbench scripts send (bench/internal/pgbench, proven
// equal to the server's), in the same round trips, pipelined as the server
// pipelines them; it looks the session cookie up (one request's lookup a
// statement: the server shares one between the requests queueing for the
// pool, internal/auth/lookup.go), checks the CSRF token,
// reads and writes JSON, and does nothing else: no validation middleware,
// no request log, no metrics, no Problem bodies. It is not product code.
//
// Configuration: ADDR (host:port), DATABASE_URL, TREASURY_ADDRESS,
// DB_MAX_CONNS (the server pool's size, default 20 as the server's) and
// PGOPTIONS (the server pool's session settings); the queries are read
// from QUERIES_DIR (default queries).
package main

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"creativeapi/bench/internal/pgbench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		stop()
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	dir := os.Getenv("QUERIES_DIR")
	if dir == "" {
		dir = "queries"
	}
	qs, err := pgbench.LoadQueries(dir)
	if err != nil {
		return err
	}
	size, err := strconv.ParseInt(cmp.Or(os.Getenv("DB_MAX_CONNS"), strconv.Itoa(defaultPoolSize)), 10, 32)
	if err != nil {
		return fmt.Errorf("DB_MAX_CONNS: %w", err)
	}
	pool, err := openPool(ctx, os.Getenv("DATABASE_URL"), int32(size), nil)
	if err != nil {
		return err
	}
	defer pool.Close()
	f, err := newFloor(pool, qs, os.Getenv("TREASURY_ADDRESS"))
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: os.Getenv("ADDR"), Handler: f.routes(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.WithoutCancel(ctx))
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// defaultPoolSize is the server's pool size when DB_MAX_CONNS is unset.
const defaultPoolSize = 20

// openPool connects with a pool of size connections, the server's
// (DB_MAX_CONNS, which the bench sets as it sets the server's); tracer,
// when not nil, sees every query (the floor's test).
func openPool(ctx context.Context, url string, size int32, tracer pgx.QueryTracer) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = size
	cfg.ConnConfig.Tracer = tracer
	return pgxpool.NewWithConfig(ctx, cfg)
}

// floor holds the statements, written $n in the order listed with each.
type floor struct {
	pool     *pgxpool.Pool
	treasury string

	sessionGet, sessionTouch                         string
	keyInsert, keySetResponse                        string
	depositSavepoint, depositSlotLock, depositInsert string
	creativeLock, creativeTransition, versionsRead   string
	outboxInsert, roleGet, creativeGet, creativePage string
}

func newFloor(pool *pgxpool.Pool, qs pgbench.Queries, treasury string) (*floor, error) {
	f := &floor{pool: pool, treasury: treasury}
	for _, s := range []struct {
		dst    *string
		name   string
		params []string
	}{
		{&f.sessionGet, "SessionGetBatch", []string{"token_hashes", "idempotency_keys"}},
		{&f.sessionTouch, "SessionTouch", []string{"idle_seconds", "id"}},
		{&f.keyInsert, "IdempotencyKeyInsert", []string{"user_id", "key", "fingerprint", "ttl_seconds"}},
		{&f.keySetResponse, "IdempotencyKeySetResponse", []string{"status_code", "response_body", "response_location", "user_id", "key"}},
		{&f.depositSavepoint, "DepositCreateSavepoint", nil},
		{&f.depositSlotLock, "DepositOwnerSlotLock", []string{"user_id", "slot"}},
		{&f.depositInsert, "DepositInsert", []string{"user_id", "network", "address", "currency", "base_amount_minor", "suffix_minor",
			"requested_amount_minor", "confirmations_required", "ttl", "reserve_for", "max_open", "slot"}},
		{&f.creativeLock, "CreativeLockForAction", []string{"caller_id", "id", "organization_id"}},
		{&f.creativeTransition, "CreativeTransition", []string{"to_status", "version", "updated_at", "approved_version_id", "id",
			"actor_id", "actor_guest_id", "action", "from_status", "comment", "acknowledged_threads"}},
		{&f.versionsRead, "CreativeVersionsWithAssets", []string{"ids"}},
		{&f.outboxInsert, "OutboxEventsInsert", []string{"types", "organization_ids", "user_ids", "payloads"}},
		{&f.roleGet, "MembershipRoleGet", []string{"organization_id", "user_id"}},
		{&f.creativeGet, "CreativeGet", []string{"organization_id", "id"}},
		{&f.creativePage, "CreativePage", []string{"organization_id", "before_number", "row_limit"}},
	} {
		q, ok := qs[s.name]
		if !ok {
			return nil, fmt.Errorf("no query %s", s.name)
		}
		sql, err := q.Positional(s.params...)
		if err != nil {
			return nil, err
		}
		*s.dst = sql
	}
	return f, nil
}

func (f *floor) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/me/balance/deposits", f.createDeposit)
	mux.HandleFunc("POST /api/v1/organizations/{org}/creatives/{id}/actions", f.creativeAction)
	mux.HandleFunc("GET /api/v1/organizations/{org}/creatives/{id}", f.getCreative)
	mux.HandleFunc("GET /api/v1/organizations/{org}/creatives", f.listCreatives)
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := f.pool.Ping(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		}
	})
	return mux
}

// Settings the server runs the benchmark with (its defaults).
const (
	sessionIdle    = 12 * time.Hour
	keyTTLSeconds  = 24 * 60 * 60
	depositTTL     = 30 * time.Minute
	depositWindow  = 24 * time.Hour
	confirmations  = 19
	maxOpen        = 1_000_000
	createSlots    = 8 // the server's slots of one user's creates at maxOpen
	depositsPath   = "/api/v1/me/balance/deposits"
	minMinor       = 10_000_000
	maxMinor       = 100_000_000_000
	centMinor      = 10_000
	suffixMax      = 9999
	pageSize       = 20
	maxBeforeValue = 2147483647
)

// session is the caller, with the answer stored under the request's key.
type session struct {
	id, userID pgtype.UUID
	csrf       string
	lastSeen   time.Time
	email      string
	name       string
	operator   bool
	storedFP   []byte
	status     *int32
	body       []byte
	location   *string
}

// authenticate looks the session cookie up (with key's stored answer); a
// command must send the session's CSRF token. It answers the refusal
// itself and returns ok false.
func (f *floor) authenticate(w http.ResponseWriter, r *http.Request, key string, command bool) (s session, ok bool) {
	c, err := r.Cookie("session")
	if err != nil || c.Value == "" || len(c.Value) > 100 {
		http.Error(w, `{"status":401}`, http.StatusUnauthorized)
		return s, false
	}
	hash := sha256.Sum256([]byte(c.Value))
	var ord int32
	err = f.pool.QueryRow(r.Context(), f.sessionGet, [][]byte{hash[:]}, []string{key}).Scan(&ord,
		&s.id, &s.userID, &s.csrf, &s.lastSeen, &s.email, &s.name, &s.operator, &s.storedFP, &s.status, &s.body, &s.location)
	if errors.Is(err, pgx.ErrNoRows) {
		http.Error(w, `{"status":401}`, http.StatusUnauthorized)
		return s, false
	} else if err != nil {
		fail(w, err)
		return s, false
	}
	if time.Since(s.lastSeen) > time.Minute {
		if _, err := f.pool.Exec(r.Context(), f.sessionTouch, int32(sessionIdle/time.Second), s.id); err != nil {
			fail(w, err)
			return s, false
		}
	}
	if command && r.Header.Get("X-CSRF-Token") != s.csrf {
		http.Error(w, `{"status":403}`, http.StatusForbidden)
		return s, false
	}
	return s, true
}

// replay sends the answer stored under the key when it holds one for the
// same request (ok true).
func replay(w http.ResponseWriter, s session, fp []byte) (done bool) {
	if s.storedFP == nil {
		return false
	}
	if !bytes.Equal(s.storedFP, fp) || s.status == nil {
		http.Error(w, `{"status":422}`, http.StatusUnprocessableEntity)
		return true
	}
	h := w.Header()
	h.Set("Idempotent-Replayed", "true")
	if s.location != nil {
		h.Set("Location", *s.location)
	}
	writeJSON(w, int(*s.status), s.body)
	return true
}

// fingerprint is the request's target and its body re-encoded.
func fingerprint(target string, body any) []byte {
	b, _ := json.Marshal(body)
	h := sha256.New()
	h.Write([]byte(target))
	h.Write([]byte{0})
	h.Write(b)
	return h.Sum(nil)
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
	if err == nil {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		http.Error(w, `{"status":400}`, http.StatusBadRequest)
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func fail(w http.ResponseWriter, err error) {
	http.Error(w, `{"status":500,"detail":`+strconv.Quote(err.Error())+`}`, http.StatusInternalServerError)
}

// inTx runs a transaction on one connection; fn sends its statements in
// pipelines (BEGIN with the first, COMMIT with the last).
func (f *floor) inTx(ctx context.Context, fn func(conn *pgx.Conn) error) error {
	c, err := f.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	if err := fn(c.Conn()); err != nil {
		if c.Conn().PgConn().TxStatus() != 'I' {
			_, _ = c.Exec(context.WithoutCancel(ctx), "rollback")
		}
		return err
	}
	return nil
}

// execAll reads the results of the statements of a pipeline that return
// no rows.
func execAll(br pgx.BatchResults, n int) error {
	for range n {
		if _, err := br.Exec(); err != nil {
			return err
		}
	}
	return nil
}

type money struct {
	AmountMinor string `json:"amountMinor"`
	Currency    string `json:"currency"`
	Scale       int    `json:"scale"`
}

func usdt(minor int64) money {
	return money{AmountMinor: strconv.FormatInt(minor, 10), Currency: "USDT", Scale: 6}
}

type depositJSON struct {
	Address               string    `json:"address"`
	Confirmations         int32     `json:"confirmations"`
	ConfirmationsRequired int32     `json:"confirmationsRequired"`
	CreatedAt             time.Time `json:"createdAt"`
	CreditedAmount        money     `json:"creditedAmount"`
	ExpiresAt             time.Time `json:"expiresAt"`
	ID                    uuid.UUID `json:"id"`
	Network               string    `json:"network"`
	NetworkLabel          string    `json:"networkLabel"`
	RequestedAmount       money     `json:"requestedAmount"`
	// Review is null: a new deposit is never under review.
	Review        *struct{} `json:"review"`
	Status        string    `json:"status"`
	TransactionID *string   `json:"transactionId"`
}

func (f *floor) createDeposit(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	s, ok := f.authenticate(w, r, key, true)
	if !ok {
		return
	}
	var in struct {
		Amount money `json:"amount"`
	}
	if !readJSON(w, r, &in) {
		return
	}
	base, err := strconv.ParseInt(in.Amount.AmountMinor, 10, 64)
	if err != nil || in.Amount.Currency != "USDT" || in.Amount.Scale != 6 || base%centMinor != 0 || base < minMinor || base > maxMinor {
		http.Error(w, `{"status":422}`, http.StatusUnprocessableEntity)
		return
	}
	fp := fingerprint("POST "+depositsPath, in)
	if replay(w, s, fp) {
		return
	}
	var body []byte
	var location string
	err = f.inTx(r.Context(), func(conn *pgx.Conn) error {
		suffix := 1 + rand.Int32N(suffixMax)
		b := &pgx.Batch{}
		b.Queue("begin")
		b.Queue(f.keyInsert, s.userID, key, fp, int32(keyTTLSeconds))
		b.Queue(f.depositSavepoint)
		slot := slotFor(s.userID)
		b.Queue(f.depositSlotLock, s.userID, slot)
		b.Queue(f.depositInsert, s.userID, "TRC20", f.treasury, "USDT", base, suffix, base+int64(suffix), int32(confirmations),
			pgtype.Interval{Microseconds: depositTTL.Microseconds(), Valid: true},
			pgtype.Interval{Microseconds: (depositTTL + depositWindow).Microseconds(), Valid: true}, int32(maxOpen-(createSlots-1)), slot)
		br := conn.SendBatch(r.Context(), b)
		if err := execAll(br, 4); err != nil {
			br.Close()
			return err
		}
		var d struct {
			id, user                            pgtype.UUID
			network, address, currency, status  string
			base, requested, credited           int64
			suffix, confirmations, required     int32
			reserved, review, contested         bool
			reservedUntil, createdAt, expiresAt time.Time
			txID                                *string
			reviewReason                        *string
			reviewReceived                      *int64
			reviewOpenedAt, cancelledAt         *time.Time
			topUpOf                             pgtype.UUID
			topUpAmount                         *int64
			topUpExpiresAt, refundedAt          *time.Time
			refundAddress, refundTxID           *string
		}
		if err := br.QueryRow().Scan(&d.id, &d.user, &d.network, &d.address, &d.currency, &d.base, &d.suffix, &d.requested,
			&d.credited, &d.confirmations, &d.required, &d.status, &d.reserved, &d.reservedUntil, &d.txID, &d.review,
			&d.createdAt, &d.expiresAt, &d.reviewReason, &d.reviewReceived, &d.reviewOpenedAt, &d.cancelledAt,
			&d.topUpOf, &d.topUpAmount, &d.topUpExpiresAt, &d.refundAddress, &d.refundTxID, &d.refundedAt, &d.contested); err != nil {
			br.Close()
			return err // a taken suffix (no row) is an error here: rare, and counted
		}
		if err := br.Close(); err != nil {
			return err
		}
		id := uuid.UUID(d.id.Bytes)
		var err error
		body, err = json.Marshal(depositJSON{
			Address: d.address, Confirmations: d.confirmations, ConfirmationsRequired: d.required, CreatedAt: d.createdAt.UTC(),
			CreditedAmount: usdt(d.credited), ExpiresAt: d.expiresAt.UTC(), ID: id, Network: d.network,
			NetworkLabel: "TRON (TRC20)", RequestedAmount: usdt(d.requested), Status: d.status, TransactionID: d.txID,
		})
		if err != nil {
			return err
		}
		location = depositsPath + "/" + id.String()
		b = &pgx.Batch{}
		b.Queue(f.keySetResponse, int32(http.StatusCreated), body, &location, s.userID, key)
		b.Queue("commit")
		return conn.SendBatch(r.Context(), b).Close()
	})
	if err != nil {
		fail(w, err)
		return
	}
	w.Header().Set("Location", location)
	writeJSON(w, http.StatusCreated, body)
}

// creativeRow is a creative (c.*) with the names its detail shows.
type creativeRow struct {
	id, org                                   pgtype.UUID
	number                                    int32
	title, typ, aspect, geo, language         string
	direction, author, reviewer, client, task pgtype.UUID
	current, approved                         pgtype.UUID
	status                                    string
	version                                   int32
	createdAt, updatedAt                      time.Time
	reviewPlan                                bool
	reviewRound                               int32
	authorName                                string
	reviewerName, clientName, taskName        *string
}

func (c *creativeRow) dest() []any {
	return []any{&c.id, &c.org, &c.number, &c.title, &c.typ, &c.aspect, &c.geo, &c.language, &c.direction, &c.author,
		&c.reviewer, &c.client, &c.task, &c.current, &c.approved, &c.status, &c.version, &c.createdAt, &c.updatedAt,
		&c.reviewPlan, &c.reviewRound, &c.authorName, &c.reviewerName, &c.clientName, &c.taskName}
}

// versionIDs are the versions the creatives' details show.
func versionIDs(cs ...*creativeRow) []pgtype.UUID {
	ids := make([]pgtype.UUID, 0, 2*len(cs))
	for _, c := range cs {
		if c.current.Valid {
			ids = append(ids, c.current)
		}
		if c.approved.Valid && c.approved != c.current {
			ids = append(ids, c.approved)
		}
	}
	return ids
}

type userRef struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

type assetJSON struct {
	DurationMs *int32     `json:"durationMs"`
	FileName   string     `json:"fileName"`
	Height     *int32     `json:"height"`
	ID         uuid.UUID  `json:"id"`
	MimeType   string     `json:"mimeType"`
	Sha256     string     `json:"sha256"`
	SizeBytes  int64      `json:"sizeBytes"`
	UploadID   *uuid.UUID `json:"uploadId"`
	URL        string     `json:"url"`
	Width      *int32     `json:"width"`
}

type versionJSON struct {
	Assets    []assetJSON `json:"assets"`
	Author    userRef     `json:"author"`
	CreatedAt time.Time   `json:"createdAt"`
	ID        uuid.UUID   `json:"id"`
	Number    int32       `json:"number"`
	// openComments is the version's open top-level comments: the
	// creative's openCommentCount when it is the current version;
	// openThreads its creative's open threads (openThreadCount).
	openComments, openThreads int32
}

type creativeJSON struct {
	ApprovedVersion  *versionJSON `json:"approvedVersion"`
	AspectRatio      string       `json:"aspectRatio"`
	Author           userRef      `json:"author"`
	AvailableActions []string     `json:"availableActions"`
	Client           *userRef     `json:"client"`
	CurrentVersion   *versionJSON `json:"currentVersion"`
	DirectionID      *uuid.UUID   `json:"directionId"`
	Geo              string       `json:"geo"`
	ID               uuid.UUID    `json:"id"`
	Language         string       `json:"language"`
	Number           string       `json:"number"`
	OpenCommentCount int32        `json:"openCommentCount"`
	OpenThreadCount  int32        `json:"openThreadCount"`
	Permissions      struct {
		AddVersion     bool `json:"addVersion"`
		AssignReviewer bool `json:"assignReviewer"`
		Edit           bool `json:"edit"`
	} `json:"permissions"`
	// ReviewPlan is null: the bench's creatives have no review plan.
	ReviewPlan   *struct{} `json:"reviewPlan"`
	ReviewStatus string    `json:"reviewStatus"`
	Reviewer     *userRef  `json:"reviewer"`
	Task         *userRef  `json:"task"`
	Title        string    `json:"title"`
	Type         string    `json:"type"`
	UpdatedAt    time.Time `json:"updatedAt"`
	Version      int32     `json:"version"`
}

// readVersions reads the versions' rows (one per asset) into details.
func readVersions(rows pgx.Rows) (map[pgtype.UUID]*versionJSON, error) {
	out := map[pgtype.UUID]*versionJSON{}
	for rows.Next() {
		var id, author, assetID, uploadID pgtype.UUID
		var number int32
		var createdAt time.Time
		var authorName string
		var fileName, mime, url, sha *string
		var size *int64
		var width, height, duration *int32
		var openComments, openThreads int32
		if err := rows.Scan(&id, &number, &createdAt, &author, &authorName, &assetID, &fileName, &mime, &size, &url,
			&width, &height, &duration, &sha, &uploadID, &openComments, &openThreads); err != nil {
			return nil, err
		}
		v := out[id]
		if v == nil {
			v = &versionJSON{ID: id.Bytes, Number: number, CreatedAt: createdAt.UTC(),
				Author: userRef{ID: author.Bytes, Name: authorName}, Assets: []assetJSON{}, openComments: openComments, openThreads: openThreads}
			out[id] = v
		}
		if assetID.Valid {
			a := assetJSON{ID: assetID.Bytes, FileName: *fileName, MimeType: *mime, SizeBytes: *size,
				URL: *url, Width: width, Height: height, DurationMs: duration, Sha256: *sha}
			if uploadID.Valid {
				u := uuid.UUID(uploadID.Bytes)
				a.UploadID = &u
			}
			v.Assets = append(v.Assets, a)
		}
	}
	return out, rows.Err()
}

// actions are the actions a role may take on a creative in a status.
func actions(status, role string) []string {
	switch {
	case role == "author" && (status == "draft" || status == "changes_requested"):
		return []string{"submit", "archive"}
	case role == "reviewer" && status == "in_review":
		return []string{"approve", "request_changes"}
	}
	return []string{}
}

func ref(id pgtype.UUID, name *string) *userRef {
	if !id.Valid || name == nil {
		return nil
	}
	return &userRef{ID: id.Bytes, Name: *name}
}

func detail(c *creativeRow, role string, versions map[pgtype.UUID]*versionJSON) creativeJSON {
	d := creativeJSON{
		AspectRatio: c.aspect, Author: userRef{ID: c.author.Bytes, Name: c.authorName},
		AvailableActions: actions(c.status, role), Client: ref(c.client, c.clientName), Geo: c.geo, ID: c.id.Bytes,
		Language: c.language, Number: fmt.Sprintf("CR-%06d", c.number), ReviewStatus: c.status,
		Reviewer: ref(c.reviewer, c.reviewerName), Task: ref(c.task, c.taskName), Title: c.title, Type: c.typ,
		UpdatedAt: c.updatedAt.UTC(), Version: c.version,
	}
	if c.direction.Valid {
		id := uuid.UUID(c.direction.Bytes)
		d.DirectionID = &id
	}
	if c.current.Valid {
		d.CurrentVersion = versions[c.current]
		if d.CurrentVersion != nil {
			d.OpenCommentCount, d.OpenThreadCount = d.CurrentVersion.openComments, d.CurrentVersion.openThreads
		}
	}
	if c.approved.Valid {
		d.ApprovedVersion = versions[c.approved]
	}
	d.Permissions.AddVersion = role == "author" && (c.status == "draft" || c.status == "changes_requested")
	d.Permissions.Edit = d.Permissions.AddVersion
	d.Permissions.AssignReviewer = role == "reviewer" || role == "admin"
	return d
}

// transitions are the review actions the benchmark sends: from, to and
// the event type.
var transitions = map[string]struct {
	from      []string
	to, event string
}{
	"submit":          {[]string{"draft", "changes_requested"}, "in_review", "creative.submitted"},
	"request_changes": {[]string{"in_review"}, "changes_requested", "creative.changes_requested"},
	"approve":         {[]string{"in_review"}, "approved", "creative.approved"},
}

func (f *floor) creativeAction(w http.ResponseWriter, r *http.Request) {
	org, err1 := uuid.Parse(r.PathValue("org"))
	id, err2 := uuid.Parse(r.PathValue("id"))
	if err1 != nil || err2 != nil {
		http.Error(w, `{"status":404}`, http.StatusNotFound)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	s, ok := f.authenticate(w, r, key, true)
	if !ok {
		return
	}
	var in struct {
		Action  string  `json:"action"`
		Comment *string `json:"comment,omitempty"`
	}
	if !readJSON(w, r, &in) {
		return
	}
	t, ok := transitions[in.Action]
	if !ok {
		http.Error(w, `{"status":422}`, http.StatusUnprocessableEntity)
		return
	}
	fp := fingerprint("POST /api/v1/organizations/"+org.String()+"/creatives/"+id.String()+"/actions", in)
	if replay(w, s, fp) {
		return
	}
	status := http.StatusOK
	var body []byte
	err := f.inTx(r.Context(), func(conn *pgx.Conn) error {
		b := &pgx.Batch{}
		b.Queue("begin")
		b.Queue(f.keyInsert, s.userID, key, fp, int32(keyTTLSeconds))
		b.Queue(f.creativeLock, s.userID, pgtype.UUID{Bytes: id, Valid: true}, pgtype.UUID{Bytes: org, Valid: true})
		br := conn.SendBatch(r.Context(), b)
		if err := execAll(br, 2); err != nil {
			br.Close()
			return err
		}
		var c creativeRow
		var role string
		var now time.Time
		var unaddressed []pgtype.UUID
		var versionAuthor pgtype.UUID
		var planNamesGuests bool
		err := br.QueryRow().Scan(append(c.dest(), &role, &now, &unaddressed, &versionAuthor, &planNamesGuests)...)
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if errors.Is(err, pgx.ErrNoRows) {
			status = http.StatusNotFound
			return err
		} else if err != nil {
			return err
		}
		allowed := false
		for _, from := range t.from {
			allowed = allowed || c.status == from
		}
		if !allowed {
			status = http.StatusConflict
			return errors.New("not allowed in this status")
		}
		from := c.status
		approved := pgtype.UUID{}
		if in.Action == "approve" {
			approved = c.current
		}
		c.status, c.version, c.updatedAt, c.approved = t.to, c.version+1, now, approved
		b = &pgx.Batch{}
		b.Queue(f.creativeTransition, t.to, c.version, now, approved, c.id, s.userID, nil, in.Action, from, in.Comment, nil)
		b.Queue(f.versionsRead, versionIDs(&c))
		br = conn.SendBatch(r.Context(), b)
		if err := execAll(br, 1); err != nil {
			br.Close()
			return err
		}
		rows, err := br.Query()
		if err != nil {
			br.Close()
			return err
		}
		versions, err := readVersions(rows)
		rows.Close()
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		if body, err = json.Marshal(detail(&c, role, versions)); err != nil {
			return err
		}
		payload, err := json.Marshal(struct {
			Type      string          `json:"type"`
			Timestamp time.Time       `json:"timestamp"`
			Data      json.RawMessage `json:"data"`
		}{t.event, now.UTC(), body})
		if err != nil {
			return err
		}
		b = &pgx.Batch{}
		b.Queue(f.outboxInsert, []string{t.event}, []pgtype.UUID{c.org}, []pgtype.UUID{{Valid: true}}, [][]byte{payload})
		b.Queue(f.keySetResponse, int32(http.StatusOK), body, nil, s.userID, key)
		b.Queue("commit")
		return conn.SendBatch(r.Context(), b).Close()
	})
	switch {
	case err != nil && status != http.StatusOK:
		http.Error(w, `{"status":`+strconv.Itoa(status)+`}`, status)
	case err != nil:
		fail(w, err)
	default:
		writeJSON(w, http.StatusOK, body)
	}
}

// member reads the caller's role in the organization of the path; it
// answers 404 itself (ok false).
func (f *floor) member(w http.ResponseWriter, r *http.Request, s session) (org pgtype.UUID, role string, ok bool) {
	id, err := uuid.Parse(r.PathValue("org"))
	if err != nil {
		http.Error(w, `{"status":404}`, http.StatusNotFound)
		return org, "", false
	}
	org = pgtype.UUID{Bytes: id, Valid: true}
	err = f.pool.QueryRow(r.Context(), f.roleGet, org, s.userID).Scan(&role)
	if errors.Is(err, pgx.ErrNoRows) {
		http.Error(w, `{"status":404}`, http.StatusNotFound)
		return org, "", false
	} else if err != nil {
		fail(w, err)
		return org, "", false
	}
	return org, role, true
}

func (f *floor) getCreative(w http.ResponseWriter, r *http.Request) {
	s, ok := f.authenticate(w, r, "", false)
	if !ok {
		return
	}
	org, role, ok := f.member(w, r, s)
	if !ok {
		return
	}
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		http.Error(w, `{"status":404}`, http.StatusNotFound)
		return
	}
	var c creativeRow
	err = f.pool.QueryRow(r.Context(), f.creativeGet, org, pgtype.UUID{Bytes: id, Valid: true}).Scan(c.dest()...)
	if errors.Is(err, pgx.ErrNoRows) {
		http.Error(w, `{"status":404}`, http.StatusNotFound)
		return
	} else if err != nil {
		fail(w, err)
		return
	}
	rows, err := f.pool.Query(r.Context(), f.versionsRead, versionIDs(&c))
	if err != nil {
		fail(w, err)
		return
	}
	versions, err := readVersions(rows)
	rows.Close()
	if err != nil {
		fail(w, err)
		return
	}
	body, err := json.Marshal(detail(&c, role, versions))
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

func (f *floor) listCreatives(w http.ResponseWriter, r *http.Request) {
	s, ok := f.authenticate(w, r, "", false)
	if !ok {
		return
	}
	org, role, ok := f.member(w, r, s)
	if !ok {
		return
	}
	rows, err := f.pool.Query(r.Context(), f.creativePage, org, int32(maxBeforeValue), int32(pageSize+1))
	if err != nil {
		fail(w, err)
		return
	}
	var page []*creativeRow
	for rows.Next() {
		c := &creativeRow{}
		if err := rows.Scan(c.dest()...); err != nil {
			rows.Close()
			fail(w, err)
			return
		}
		page = append(page, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		fail(w, err)
		return
	}
	var next *string
	if len(page) > pageSize {
		page = page[:pageSize]
		cursor := strconv.Itoa(int(page[pageSize-1].number))
		next = &cursor
	}
	rows, err = f.pool.Query(r.Context(), f.versionsRead, versionIDs(page...))
	if err != nil {
		fail(w, err)
		return
	}
	versions, err := readVersions(rows)
	rows.Close()
	if err != nil {
		fail(w, err)
		return
	}
	items := make([]creativeJSON, len(page))
	for i, c := range page {
		items[i] = detail(c, role, versions)
	}
	body, err := json.Marshal(struct {
		Items      []creativeJSON `json:"items"`
		NextCursor *string        `json:"nextCursor"`
	}{items, next})
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// createTurns hands each user's creates the slots in turn, as the server
// does (internal/deposit: slotFor).
var createTurns [1024]atomic.Uint32

func slotFor(user pgtype.UUID) int32 {
	turn := &createTurns[binary.BigEndian.Uint16(user.Bytes[14:])%uint16(len(createTurns))]
	return int32(turn.Add(1) % createSlots)
}
