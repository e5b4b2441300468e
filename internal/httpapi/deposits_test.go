package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"creativeapi/gen/api"
	"creativeapi/internal/deposit"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

const depositsPath = "/api/v1/me/balance/deposits"

// depositRequest is a CreateAccountDepositRequest body of minor units of USDT.
func depositRequest(minor string) map[string]any {
	return map[string]any{"amount": map[string]any{"amountMinor": minor, "currency": "USDT", "scale": 6}}
}

// createDeposit creates a deposit of minor and fails the test unless 201.
func createDeposit(t *testing.T, c *testenv.Client, minor string) api.AccountDeposit {
	t.Helper()
	r := c.Do(http.MethodPost, depositsPath, depositRequest(minor))
	if r.Status != http.StatusCreated {
		t.Fatalf("create deposit: %d %s", r.Status, r.Body)
	}
	var d api.AccountDeposit
	r.JSON(t, &d)
	return d
}

func TestCreateDeposit_AnswersTheDepositToPay(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Dana Depositor")
	r := c.Do(http.MethodPost, depositsPath, depositRequest("100000000"))
	if r.Status != http.StatusCreated {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var d api.AccountDeposit
	r.JSON(t, &d)
	if loc := r.Header.Get("Location"); loc != depositsPath+"/"+d.Id.String() {
		t.Errorf("Location %q, id %s", loc, d.Id)
	}
	requested, err := strconv.ParseInt(d.RequestedAmount.AmountMinor, 10, 64)
	if suffix := requested - 100_000_000; err != nil || suffix < deposit.SuffixMin || suffix > deposit.SuffixMax {
		t.Errorf("requestedAmount %s is not 100 USDT plus a suffix in 1..9999", d.RequestedAmount.AmountMinor)
	}
	usdt := func(m api.Money) bool { return m.Currency == api.USDT && m.Scale == api.N6 }
	if !usdt(d.RequestedAmount) || !usdt(d.CreditedAmount) || d.CreditedAmount.AmountMinor != "0" {
		t.Errorf("money fields: requested %+v, credited %+v", d.RequestedAmount, d.CreditedAmount)
	}
	if d.Address != tron.DevTreasuryAddress || d.Network != api.TRC20 || d.NetworkLabel != "TRON (TRC20)" {
		t.Errorf("destination: %s %s %q", d.Address, d.Network, d.NetworkLabel)
	}
	if d.Status != api.DepositStatusAwaitingTransfer || d.Confirmations != 0 || d.ConfirmationsRequired != 19 {
		t.Errorf("status %s, confirmations %d/%d", d.Status, d.Confirmations, d.ConfirmationsRequired)
	}
	if ttl := d.ExpiresAt.Sub(d.CreatedAt); ttl != 30*time.Minute {
		t.Errorf("expiresAt - createdAt = %s, want 30m", ttl)
	}
	if since := time.Since(d.CreatedAt); since < -time.Minute || since > time.Minute {
		t.Errorf("createdAt %s is not now", d.CreatedAt)
	}

	var reservedUntil, expiresAt time.Time
	var reserved bool
	err = env.DB.Pool.QueryRow(context.Background(), "SELECT reserved, reserved_until, expires_at FROM deposits WHERE id = $1", d.Id).
		Scan(&reserved, &reservedUntil, &expiresAt)
	if err != nil || !reserved || reservedUntil.Sub(expiresAt) != 24*time.Hour {
		t.Errorf("reservation: %v until %s (expires %s), %v", reserved, reservedUntil, expiresAt, err)
	}

	t.Run("get answers the same deposit", func(t *testing.T) {
		g := c.Do(http.MethodGet, r.Header.Get("Location"), nil)
		var got api.AccountDeposit
		g.JSON(t, &got)
		if g.Status != http.StatusOK || !reflect.DeepEqual(got, d) {
			t.Fatalf("get: %d %+v, want %+v", g.Status, got, d)
		}
	})
	t.Run("a repeat under the same Idempotency-Key replays", func(t *testing.T) {
		key := testenv.Header{Name: "Idempotency-Key", Value: uuid.NewString()}
		first := c.Do(http.MethodPost, depositsPath, depositRequest("20000000"), key)
		again := c.Do(http.MethodPost, depositsPath, depositRequest("20000000"), key)
		if first.Status != http.StatusCreated || again.Status != http.StatusCreated || string(first.Body) != string(again.Body) ||
			again.Header.Get("Location") != first.Header.Get("Location") || again.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("first %d %s\nagain %d %s %v", first.Status, first.Body, again.Status, again.Body, again.Header)
		}
	})
}

func TestCreateDeposit_ReportsEveryInvalidAmountField(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Ivan Invalid")
	type fe struct{ field, code string }
	body := func(minor any, currency any, scale any) map[string]any {
		return map[string]any{"amount": map[string]any{"amountMinor": minor, "currency": currency, "scale": scale}}
	}
	tests := []struct {
		name string
		body any
		want []fe
	}{
		{"currency other than USDT", body("10000000", "USDC", 6), []fe{{"amount.currency", "invalid_value"}}},
		{"scale other than 6", body("10000000", "USDT", 2), []fe{{"amount.scale", "invalid_value"}}},
		{"amount with a point", body("10.5", "USDT", 6), []fe{{"amount.amountMinor", "invalid_format"}}},
		{"amount with a sign", body("-10000000", "USDT", 6), []fe{{"amount.amountMinor", "invalid_format"}}},
		{"amount as a number", body(10000000, "USDT", 6), []fe{{"amount.amountMinor", "invalid_type"}}},
		{"amount not whole cents", body("10000001", "USDT", 6), []fe{{"amount.amountMinor", "invalid_value"}}},
		{"amount below the minimum", body("9990000", "USDT", 6), []fe{{"amount.amountMinor", "out_of_range"}}},
		{"amount above the maximum", body("100000010000", "USDT", 6), []fe{{"amount.amountMinor", "out_of_range"}}},
		{"amount beyond int64", body("99999999999999999999", "USDT", 6), []fe{{"amount.amountMinor", "out_of_range"}}},
		{"zero", body("0", "USDT", 6), []fe{{"amount.amountMinor", "out_of_range"}}},
		{"several at once", body("10000001", "EUR", 2), []fe{
			{"amount.currency", "invalid_value"}, {"amount.scale", "invalid_value"}, {"amount.amountMinor", "invalid_value"}}},
		{"missing amount", map[string]any{}, []fe{{"amount", "required"}}},
		{"missing members", map[string]any{"amount": map[string]any{}}, []fe{
			{"amount.amountMinor", "required"}, {"amount.currency", "required"}, {"amount.scale", "required"}}},
		{"unknown field", map[string]any{"amount": body("10000000", "USDT", 6)["amount"], "memo": "x"}, []fe{{"memo", "unknown_field"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := c.Do(http.MethodPost, depositsPath, tt.body)
			p := r.Problem(t)
			if r.Status != http.StatusUnprocessableEntity || p.Code != "invalid_request" {
				t.Fatalf("got %d %s: %s", r.Status, p.Code, r.Body)
			}
			var got []fe
			for _, f := range p.FieldErrors {
				got = append(got, fe{f.Field, f.Code})
			}
			if len(got) != len(tt.want) {
				t.Fatalf("fieldErrors %v, want %v", got, tt.want)
			}
			for _, w := range tt.want {
				found := false
				for _, g := range got {
					found = found || g == w
				}
				if !found {
					t.Errorf("fieldErrors %v lack %v", got, w)
				}
			}
		})
	}
	if n := countDepositRows(t, env, "SELECT count(*) FROM deposits"); n != 0 {
		t.Fatalf("%d deposits created by invalid requests", n)
	}
}

func TestDeposits_RefuseRequestsBeforeTheHandler(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	anonymous := env.Client(t)
	c, _ := env.SignedIn(t, "Gina Gate")
	noCSRF, _ := env.SignedIn(t, "Nora NoToken")
	noCSRF.CSRFToken = ""
	tests := []struct {
		name    string
		client  *testenv.Client
		method  string
		path    string
		body    any
		headers []testenv.Header
		status  int
		code    string
	}{
		{"create needs a session", anonymous, "POST", depositsPath, depositRequest("10000000"), nil, 401, "unauthenticated"},
		{"list needs a session", anonymous, "GET", depositsPath, nil, nil, 401, "unauthenticated"},
		{"get needs a session", anonymous, "GET", depositsPath + "/" + uuid.NewString(), nil, nil, 401, "unauthenticated"},
		{"balance needs a session", anonymous, "GET", "/api/v1/me/balance", nil, nil, 401, "unauthenticated"},
		{"create needs the CSRF token", noCSRF, "POST", depositsPath, depositRequest("10000000"), nil, 403, "csrf_failed"},
		{"create needs the CSRF token before validation", noCSRF, "POST", depositsPath, `{`, nil, 403, "csrf_failed"},
		{"create refuses malformed JSON", c, "POST", depositsPath, `{"amount":`, nil, 400, "malformed_json"},
		{"create refuses another media type", c, "POST", depositsPath, `amount=1`,
			[]testenv.Header{{Name: "Content-Type", Value: "text/plain"}}, 415, "unsupported_media_type"},
		{"create refuses a bad Idempotency-Key", c, "POST", depositsPath, depositRequest("10000000"),
			[]testenv.Header{{Name: "Idempotency-Key", Value: "has space"}}, 422, "invalid_request"},
		{"get refuses an id that is not a UUID", c, "GET", depositsPath + "/42", nil, nil, 422, "invalid_request"},
		{"list refuses a limit of 0", c, "GET", depositsPath + "?limit=0", nil, nil, 422, "invalid_request"},
		{"list refuses a limit over 100", c, "GET", depositsPath + "?limit=101", nil, nil, 422, "invalid_request"},
		{"list refuses a cursor it did not make", c, "GET", depositsPath + "?cursor=bm9wZQ", nil, nil, 422, "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.client.Do(tt.method, tt.path, tt.body, tt.headers...)
			if p := r.Problem(t); r.Status != tt.status || p.Code != tt.code {
				t.Fatalf("got %d %s, want %d %s: %s", r.Status, p.Code, tt.status, tt.code, r.Body)
			}
		})
	}
	if n := countDepositRows(t, env, "SELECT count(*) FROM deposits"); n != 0 {
		t.Fatalf("%d deposits created by refused requests", n)
	}
}

func TestCreateDeposit_RefusesOverTheOpenLimit(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, user := env.SignedIn(t, "Lina Limit")
	for range 5 {
		createDeposit(t, c, "10000000")
	}
	key := testenv.Header{Name: "Idempotency-Key", Value: "limit-1"}
	r := c.Do(http.MethodPost, depositsPath, depositRequest("10000000"), key)
	if p := r.Problem(t); r.Status != http.StatusConflict || p.Code != "too_many_open_deposits" {
		t.Fatalf("sixth create: %d %s", r.Status, r.Body)
	}
	if n := countDepositRows(t, env, "SELECT count(*) FROM deposits WHERE user_id = $1", user); n != 5 {
		t.Fatalf("%d deposits, want 5", n)
	}
	// The limit is per user.
	other, _ := env.SignedIn(t, "Otto Other")
	createDeposit(t, other, "10000000")
}

func TestCreateDeposit_WithoutTreasuryIsUnavailable(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Env: map[string]string{"TREASURY_ADDRESS": ""}})
	c, _ := env.SignedIn(t, "Nia NoTreasury")
	r := c.Do(http.MethodPost, depositsPath, depositRequest("10000000"))
	if p := r.Problem(t); r.Status != http.StatusServiceUnavailable || p.Code != "deposits_unavailable" {
		t.Fatalf("got %d %s", r.Status, r.Body)
	}
	// Reads keep working: a user still sees their balance.
	if b := c.Do(http.MethodGet, "/api/v1/me/balance", nil); b.Status != http.StatusOK {
		t.Fatalf("balance: %d %s", b.Status, b.Body)
	}
}

func TestCreateDeposit_EverySuffixTakenIsCapacityExhausted(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	filler, _ := env.DB.User(t, "Filler")
	execDepositSQL(t, env, `INSERT INTO deposits (user_id, network, address, currency, base_amount_minor, suffix_minor,
			requested_amount_minor, confirmations_required, expires_at, reserved_until)
		SELECT $1, 'TRC20', $2, 'USDT', 100000000, s, 100000000 + s, 19, now() + interval '30 minutes', now() + interval '1 day'
		FROM generate_series(1, 9999) AS s`, filler, tron.DevTreasuryAddress)
	c, user := env.SignedIn(t, "Carl Capacity")
	r := c.Do(http.MethodPost, depositsPath, depositRequest("100000000"))
	if p := r.Problem(t); r.Status != http.StatusServiceUnavailable || p.Code != "deposit_capacity_exhausted" || r.Header.Get("Retry-After") != "60" {
		t.Fatalf("got %d %s %v", r.Status, r.Body, r.Header)
	}
	if n := countDepositRows(t, env, "SELECT count(*) FROM deposits WHERE user_id = $1", user); n != 0 {
		t.Fatalf("%d deposits written by a refused create", n)
	}
	// One cent more has every suffix free.
	createDeposit(t, c, "100010000")
}

func TestDeposit_ExpiredReadsExpiredAndFreesALimitSlot(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Eve Expired")
	var first api.AccountDeposit
	for i := range 5 {
		d := createDeposit(t, c, "10000000")
		if i == 0 {
			first = d
		}
	}
	// The lifetime passes; no sweeper has run.
	execDepositSQL(t, env, "UPDATE deposits SET expires_at = now() - interval '1 second', created_at = now() - interval '31 minutes' WHERE id = $1", first.Id)

	var got api.AccountDeposit
	c.Do(http.MethodGet, depositsPath+"/"+first.Id.String(), nil).JSON(t, &got)
	if got.Status != api.DepositStatusExpired {
		t.Errorf("get: status %s, want expired", got.Status)
	}
	var list api.AccountDepositList
	c.Do(http.MethodGet, depositsPath, nil).JSON(t, &list)
	for _, d := range list.Items {
		if want := map[bool]api.DepositStatus{true: api.DepositStatusExpired, false: api.DepositStatusAwaitingTransfer}[d.Id == first.Id]; d.Status != want {
			t.Errorf("list: %s is %s, want %s", d.Id, d.Status, want)
		}
	}
	createDeposit(t, c, "10000000")
	if r := c.Do(http.MethodPost, depositsPath, depositRequest("10000000")); r.Status != http.StatusConflict {
		t.Fatalf("seventh create: %d, want 409", r.Status)
	}
}

func TestGetDeposit_AnotherUsersDepositIsNotFound(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	owner, _ := env.SignedIn(t, "Olga Owner")
	stranger, _ := env.SignedIn(t, "Sid Stranger")
	d := createDeposit(t, owner, "10000000")
	for name, path := range map[string]string{
		"another user's deposit":       depositsPath + "/" + d.Id.String(),
		"a deposit that never existed": depositsPath + "/" + uuid.NewString(),
	} {
		r := stranger.Do(http.MethodGet, path, nil)
		if p := r.Problem(t); r.Status != http.StatusNotFound || p.Code != "not_found" {
			t.Errorf("%s: %d %s", name, r.Status, r.Body)
		}
	}
	var list api.AccountDepositList
	stranger.Do(http.MethodGet, depositsPath, nil).JSON(t, &list)
	if len(list.Items) != 0 || list.NextCursor.IsSpecified() && !list.NextCursor.IsNull() {
		t.Fatalf("stranger's list: %+v", list)
	}
}

func TestListDeposits_PagesNewestFirst(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Env: map[string]string{"DEPOSIT_MAX_OPEN_PER_USER": "10"}})
	c, user := env.SignedIn(t, "Pia Pager")
	var created []uuid.UUID
	for range 7 {
		created = append(created, createDeposit(t, c, "10000000").Id)
	}
	// Two share a creation time: the id orders them.
	execDepositSQL(t, env, "UPDATE deposits SET created_at = (SELECT created_at FROM deposits WHERE id = $1) WHERE id = $2", created[3], created[4])

	var want []uuid.UUID
	rows, err := env.DB.Pool.Query(context.Background(), "SELECT id FROM deposits WHERE user_id = $1 ORDER BY created_at DESC, id DESC", user)
	if err != nil {
		t.Fatal(err)
	}
	want, err = pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		t.Fatal(err)
	}
	if want[0] != created[6] {
		t.Fatalf("newest is %s, want the last created %s", want[0], created[6])
	}

	var got []uuid.UUID
	path, pages := depositsPath+"?limit=3", 0
	for {
		r := c.Do(http.MethodGet, path, nil)
		var page api.AccountDepositList
		r.JSON(t, &page)
		if r.Status != http.StatusOK || len(page.Items) > 3 {
			t.Fatalf("page %d: %d %s", pages, r.Status, r.Body)
		}
		pages++
		for _, d := range page.Items {
			got = append(got, d.Id)
		}
		if page.NextCursor.IsNull() {
			break
		}
		next, _ := page.NextCursor.Get()
		path = depositsPath + "?limit=3&cursor=" + next
	}
	if pages != 3 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%d pages of %v, want 3 pages of %v", pages, got, want)
	}

	t.Run("the default page holds 20", func(t *testing.T) {
		var page api.AccountDepositList
		c.Do(http.MethodGet, depositsPath, nil).JSON(t, &page)
		if len(page.Items) != 7 || !page.NextCursor.IsNull() {
			t.Fatalf("%d items, next %v", len(page.Items), page.NextCursor)
		}
	})
}

func TestBalance_SumsCreditedDeposits(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	c, _ := env.SignedIn(t, "Bob Balance")
	balance := func() api.Money {
		t.Helper()
		var b api.AccountBalance
		r := c.Do(http.MethodGet, "/api/v1/me/balance", nil)
		r.JSON(t, &b)
		if r.Status != http.StatusOK {
			t.Fatalf("balance: %d %s", r.Status, r.Body)
		}
		return b.Available
	}
	if b := balance(); b.AmountMinor != "0" || b.Currency != api.USDT || b.Scale != api.N6 {
		t.Fatalf("new user's balance %+v", b)
	}
	d1 := createDeposit(t, c, "100000000")
	d2 := createDeposit(t, c, "25000000")
	var sum int64
	for i, d := range []api.AccountDeposit{d1, d2} {
		minor, _ := strconv.ParseInt(d.RequestedAmount.AmountMinor, 10, 64)
		sum += minor
		for range 2 { // the second call changes nothing
			if _, err := deposit.Credit(context.Background(), store.Tx{Queries: env.DB.Store.Q}, d.Id, fmt.Sprintf("tx-%d", i), minor); err != nil {
				t.Fatal(err)
			}
		}
	}
	if b := balance(); b.AmountMinor != strconv.FormatInt(sum, 10) {
		t.Fatalf("balance %s, want %d", b.AmountMinor, sum)
	}
	var got api.AccountDeposit
	c.Do(http.MethodGet, depositsPath+"/"+d1.Id.String(), nil).JSON(t, &got)
	if got.Status != api.DepositStatusCredited || got.CreditedAmount.AmountMinor != d1.RequestedAmount.AmountMinor {
		t.Fatalf("credited deposit reads %s %s", got.Status, got.CreditedAmount.AmountMinor)
	}
	// Another user's balance is their own.
	other, _ := env.SignedIn(t, "Ned NoCredit")
	var b api.AccountBalance
	other.Do(http.MethodGet, "/api/v1/me/balance", nil).JSON(t, &b)
	if b.Available.AmountMinor != "0" {
		t.Fatalf("other user's balance %s", b.Available.AmountMinor)
	}
}

func TestCreateDeposit_ConcurrentCreatesReserveDistinctAmounts(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	type user struct {
		id      uuid.UUID
		client  *testenv.Client
		creates int
	}
	var users []user
	for i := range 48 {
		c, id := env.SignedIn(t, fmt.Sprintf("Crowd %d", i))
		creates := 4
		if i < 2 {
			creates = 8 // over the limit of 5
		}
		users = append(users, user{id, c, creates})
	}
	type result struct {
		user   uuid.UUID
		status int
		body   api.AccountDeposit
	}
	var mu sync.Mutex
	var results []result
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, u := range users {
		for range u.creates {
			wg.Go(func() {
				<-start
				r := u.client.Do(http.MethodPost, depositsPath, depositRequest("50000000"))
				res := result{user: u.id, status: r.Status}
				if r.Status == http.StatusCreated {
					r.JSON(t, &res.body)
				}
				mu.Lock()
				results = append(results, res)
				mu.Unlock()
			})
		}
	}
	close(start)
	wg.Wait()

	if len(results) != 200 {
		t.Fatalf("%d results, want 200", len(results))
	}
	amounts := map[string]bool{}
	created := map[uuid.UUID]int{}
	conflicts := map[uuid.UUID]int{}
	for _, r := range results {
		switch r.status {
		case http.StatusCreated:
			if amounts[r.body.RequestedAmount.AmountMinor] {
				t.Errorf("requested amount %s answered twice", r.body.RequestedAmount.AmountMinor)
			}
			amounts[r.body.RequestedAmount.AmountMinor] = true
			created[r.user]++
			if n := countDepositRows(t, env, "SELECT count(*) FROM deposits WHERE id = $1 AND user_id = $2 AND requested_amount_minor::text = $3",
				r.body.Id, r.user, r.body.RequestedAmount.AmountMinor); n != 1 {
				t.Errorf("deposit %s answered 201 but not stored", r.body.Id)
			}
		case http.StatusConflict:
			conflicts[r.user]++
		default:
			t.Errorf("unexpected status %d", r.status)
		}
	}
	for i, u := range users {
		wantCreated, wantConflicts := u.creates, 0
		if u.creates > 5 {
			wantCreated, wantConflicts = 5, u.creates-5
		}
		if created[u.id] != wantCreated || conflicts[u.id] != wantConflicts {
			t.Errorf("user %d: %d created, %d refused; want %d and %d", i, created[u.id], conflicts[u.id], wantCreated, wantConflicts)
		}
	}
	total := 0
	for _, n := range created {
		total += n
	}
	if n := countDepositRows(t, env, "SELECT count(*) FROM deposits"); n != total || total != 46*4+2*5 {
		t.Fatalf("%d rows, %d answered 201, want %d", n, total, 46*4+2*5)
	}
	if n := countDepositRows(t, env, "SELECT count(DISTINCT requested_amount_minor) FROM deposits"); n != total {
		t.Fatalf("%d distinct requested amounts for %d deposits", n, total)
	}
}

func TestCreateDeposit_RoundTrips(t *testing.T) {
	t.Parallel()
	tracer := &testenv.RoundTrips{}
	env := testenv.New(t, testenv.Options{Tracer: tracer})
	c, _ := env.SignedIn(t, "Rita RoundTrip")
	tests := []struct {
		name    string
		headers []testenv.Header
		want    int
	}{
		// session, begin+owner lock+insert, commit
		{"without Idempotency-Key", nil, 3},
		// session with the stored answer, begin+claim+owner lock+insert, store answer+commit
		{"with Idempotency-Key", []testenv.Header{{Name: "Idempotency-Key", Value: uuid.NewString()}}, 3},
	}
	for _, tt := range tests {
		var status int
		sql := tracer.Record(func() { status = c.Do(http.MethodPost, depositsPath, depositRequest("10000000"), tt.headers...).Status })
		if status != http.StatusCreated {
			t.Fatalf("%s: status %d", tt.name, status)
		}
		t.Logf("%s: %d round trips", tt.name, len(sql))
		if len(sql) != tt.want {
			t.Errorf("%s: %d round trips, want %d:\n%s", tt.name, len(sql), tt.want, strings.Join(sql, "\n"))
		}
	}
}

func countDepositRows(t *testing.T, env *testenv.Env, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := env.DB.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func execDepositSQL(t *testing.T, env *testenv.Env, sql string, args ...any) {
	t.Helper()
	if _, err := env.DB.Pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}
