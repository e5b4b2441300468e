package email_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"creativeapi/gen/db"
	"creativeapi/internal/deposit"
	"creativeapi/internal/metrics"
	"creativeapi/internal/money"
	"creativeapi/internal/store"
	"creativeapi/internal/testenv"
	"creativeapi/internal/tron"
)

func TestACreditedDepositEmailsItsPayer(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Mail: true, Env: map[string]string{"APP_URL": "https://app.example.test"}})
	user, userEmail := env.DB.User(t, "Paula Payer")
	ctx := context.Background()
	var dep db.Deposit
	err := env.DB.Store.InTx(ctx, func(q store.Tx) error {
		var err error
		dep, err = deposit.Create(ctx, q, deposit.Settings{Address: tron.DevTreasuryAddress, Confirmations: 19,
			TTL: 30 * time.Minute, MonitoringWindow: 24 * time.Hour, MaxOpenPerUser: 5}, user, 100_000_000)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = env.DB.Store.InTx(ctx, func(q store.Tx) error {
		_, err := deposit.Credit(ctx, q, dep.ID, "tx-email", dep.RequestedAmountMinor)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got := inbox(t, env.Mail, userEmail, 1) // awaiting_transfer sends nothing, credited one
	m := got[0]
	if !strings.HasPrefix(m.Subject, "Deposit of 100.") || !strings.HasSuffix(m.Subject, " USDT: credited") {
		t.Errorf("subject %q", m.Subject)
	}
	link := "https://app.example.test/balance/deposits/" + dep.ID.String()
	if !strings.Contains(m.Text, link) || !strings.Contains(m.HTML, link) {
		t.Errorf("no link %s:\n%s", link, m.Text)
	}
	checkHeaders(t, env.Mail, m, env.Config.PublicBaseURL)
}

func TestAPermanentRefusalIsCountedOnceAndNotRetried(t *testing.T) {
	t.Parallel()
	m := metrics.New()
	env := testenv.New(t, testenv.Options{Mail: true, Metrics: m})
	author, _, _, mention := mentionSetup(t, env)
	if _, err := env.DB.Pool.Exec(context.Background(), "UPDATE users SET email = $1 WHERE id = $2", "ada-"+author.String()[:8]+"@"+testenv.RefusedDomain, author); err != nil {
		t.Fatal(err)
	}
	mention()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var state, job string
		err := env.DB.Pool.QueryRow(context.Background(), `SELECT n.state, j.state FROM notifications n
			JOIN river.river_job j ON j.kind = 'email_notification' AND (j.args ->> 'notificationId')::uuid = n.id
			WHERE n.user_id = $1`, author).Scan(&state, &job)
		if err != nil && time.Now().After(deadline) {
			t.Fatal(err)
		}
		if state == "failed" && job == "cancelled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("notification %q, job %q; want failed and cancelled", state, job)
		}
		time.Sleep(20 * time.Millisecond)
	}
	body := scrape(t, m)
	if !strings.Contains(body, `creativeapi_email_failed_total{kind="mention",permanent="true"} 1`) ||
		!strings.Contains(body, `creativeapi_email_queued_total{kind="mention"} 1`) {
		t.Fatalf("metrics:\n%s", grepLines(body, "creativeapi_email_"))
	}
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// scrape reads m's exposition.
func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return rec.Body.String()
}

// TestADepositCompletedByATopUpEmailsCreditedWithBoth: a payer short
// beyond the tolerance claims their transfer (under review: one email),
// asks for a top-up (no email: they just asked) and pays it; the deposit
// credited with both transfers is one more email, with the sum.
func TestADepositCompletedByATopUpEmailsCreditedWithBoth(t *testing.T) {
	t.Parallel()
	env := testenv.New(t, testenv.Options{Mail: true, Env: map[string]string{"APP_URL": "https://app.example.test"}})
	user, userEmail := env.DB.User(t, "Tom Top-up")
	ctx := context.Background()
	settings := deposit.Settings{Address: tron.DevTreasuryAddress, Confirmations: 19,
		TTL: 30 * time.Minute, MonitoringWindow: 24 * time.Hour, MaxOpenPerUser: 5}
	var dep db.Deposit
	if err := env.DB.Store.InTx(ctx, func(q store.Tx) error {
		var err error
		dep, err = deposit.Create(ctx, q, settings, user, 100_000_000)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	short := strings.Repeat("1", 64)
	record := func(tx string, amount int64, status string, depositID any) {
		t.Helper()
		if _, err := env.DB.Pool.Exec(ctx, `INSERT INTO chain_transfers (network, tx_id, token, from_address, to_address, amount_raw,
			amount_minor, block_time, block_number, status, reason, needs_review, deposit_id)
			VALUES ('TRC20', $1, 'USDT-contract', 'payer', $2, $3::bigint::text, $3::bigint, now(), 10, $4, NULLIF($4, 'confirming'), $4 = 'unmatched', $5)`,
			tx, tron.DevTreasuryAddress, amount, status, depositID); err != nil {
			t.Fatal(err)
		}
	}
	var topUp db.Deposit
	if err := env.DB.Store.InTx(ctx, func(q store.Tx) error {
		// 5 USDT short in whole cents: the transfer keeps the deposit's
		// suffix, and the watcher attaches it for review.
		received := dep.RequestedAmountMinor - 5_000_000
		if err := deposit.Record(ctx, q, 40, []deposit.Transfer{{
			TxID: short, Token: "USDT-contract", From: "payer", To: tron.DevTreasuryAddress, AmountRaw: strconv.FormatInt(received, 10),
			AmountMinor: received, BlockTime: time.Now(), Block: 10, Status: deposit.TransferUnmatched,
			Reason: deposit.ReasonAmountMismatch, DepositID: dep.ID,
		}}, time.Now()); err != nil {
			return err
		}
		var err error
		topUp, err = deposit.TopUp(ctx, q, settings, user, dep.ID, deposit.DefaultTolerance(), time.Now())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var child db.Deposit
	if err := env.DB.Pool.QueryRow(ctx, "SELECT id, requested_amount_minor FROM deposits WHERE top_up_of = $1", dep.ID).Scan(&child.ID, &child.RequestedAmountMinor); err != nil ||
		child.RequestedAmountMinor != *topUp.TopUpAmountMinor {
		t.Fatalf("the top-up: %+v (%v)", child, err)
	}
	paid := strings.Repeat("2", 64)
	record(paid, child.RequestedAmountMinor, "confirming", child.ID)
	var id int64
	if err := env.DB.Pool.QueryRow(ctx, "SELECT id FROM chain_transfers WHERE tx_id = $1", paid).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if err := env.DB.Store.InTx(ctx, func(q store.Tx) error {
		_, err := deposit.CreditTopUp(ctx, q, id, child.ID, paid, child.RequestedAmountMinor)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	got := inbox(t, env.Mail, userEmail, 2)
	// The subject writes the sum without trailing zeros (100.00894 USDT, not
	// 100.008940 USDT).
	digits, _, _ := strings.Cut(money.USDT.Format(dep.RequestedAmountMinor-5_000_000+child.RequestedAmountMinor), " ")
	sum := strings.TrimRight(strings.TrimRight(digits, "0"), ".") + " USDT"
	var subjects []string
	for _, m := range got {
		subjects = append(subjects, m.Subject)
	}
	if !slices.Contains(subjects, "Deposit of "+sum+": credited") {
		t.Fatalf("subjects %q; want one of the credited %s", subjects, sum)
	}
}
