package testenv

import (
	"context"
	"log/slog"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"creativeapi/internal/config"
	"creativeapi/internal/email"
	"creativeapi/internal/mailserver"
	"creativeapi/internal/metrics"
	"creativeapi/internal/store"
)

// mail is the test binary's Mailpit, started by the first test that asks
// for one, so packages that send no mail never start it.
var mail struct {
	once sync.Once
	srv  *mailserver.Server
	err  error
}

func startMail() {
	ctx := context.Background()
	goBin, err := osexec.LookPath("go")
	if err != nil {
		mail.err = err
		return
	}
	out, err := osexec.Command(goBin, "env", "GOMOD").Output()
	if err != nil {
		mail.err = err
		return
	}
	bin, err := mailserver.Binary(ctx, goBin, filepath.Dir(strings.TrimSpace(string(out))))
	if err != nil {
		mail.err = err
		return
	}
	// Messages stay in memory: nothing to remove afterwards. Recipients
	// at RefusedDomain are refused (550), as a real server refuses an
	// unknown mailbox.
	mail.srv, mail.err = mailserver.Start(ctx, mailserver.Options{Bin: bin, AllowedRecipients: `\.test$`})
}

// RefusedDomain is a domain the test mail server refuses permanently.
const RefusedDomain = "refused.invalid"

// stopMail stops the shared Mailpit, if started.
func stopMail() {
	if mail.srv != nil {
		_ = mail.srv.Stop()
	}
}

// NewMailServer returns the test binary's Mailpit (SMTP plus its HTTP
// API). Tests share it: each sends to addresses of its own (NewUser's are
// unique) and reads only those.
func NewMailServer(t testing.TB) *mailserver.Server {
	t.Helper()
	mail.once.Do(startMail)
	if mail.err != nil {
		t.Fatalf("the test mail server: %v", mail.err)
	}
	return mail.srv
}

// NewEmailService is the notification service of a test server: it sends
// to the test binary's Mailpit.
func NewEmailService(t testing.TB, d *DB, cfg config.Config, log *slog.Logger, m *metrics.Metrics) *email.Service {
	t.Helper()
	sender, err := email.NewSender(NewMailServer(t).SMTPURL, cfg.MailFrom)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := email.NewService(d.Store, sender, email.Config{
		AppURL: cfg.AppURL, APIURL: cfg.PublicBaseURL, Secret: cfg.UnsubscribeSecret, DigestHour: cfg.DigestHour,
		OnQueued: m.EmailQueued, OnSent: m.EmailSent, OnFailed: m.EmailFailed,
	}, log)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// StartEmailWorkers works svc's jobs on a River client of the test's own
// until the test ends; it returns a function that stops it sooner (a
// crash, for the tests of what survives one).
func StartEmailWorkers(t testing.TB, d *DB, svc *email.Service, log *slog.Logger) (stop func()) {
	t.Helper()
	workers := river.NewWorkers()
	periodic, err := svc.Register(workers)
	if err != nil {
		t.Fatal(err)
	}
	client, err := river.NewClient(riverpgxv5.New(d.Pool), &river.Config{
		Schema: store.RiverSchema, Logger: log, Workers: workers, PeriodicJobs: periodic,
		Queues:            map[string]river.QueueConfig{email.Queue: svc.QueueConfig()},
		FetchPollInterval: 50 * time.Millisecond, FetchCooldown: 50 * time.Millisecond,
		RescueStuckJobsAfter: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = client.Stop(ctx)
		})
	}
	t.Cleanup(stop)
	return stop
}
