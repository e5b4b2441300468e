package email_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"creativeapi/gen/db"
	"creativeapi/internal/deposit"
	"creativeapi/internal/metrics"
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
